/* XXH64 (see xxh64.h): four lanes over 32-byte stripes, then the tail in
 * 8-, 4- and 1-byte steps, then the final avalanche. */
#include "support/xxh64.h"

static const uint64_t P1 = 0x9E3779B185EBCA87ull, P2 = 0xC2B2AE3D27D4EB4Full,
                      P3 = 0x165667B19E3779F9ull, P4 = 0x85EBCA77C2B2AE63ull,
                      P5 = 0x27D4EB2F165667C5ull;

static uint64_t rotl(uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}

/* Little-endian loads, whatever the host's byte order. */
static uint64_t le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}
static uint64_t le32(const unsigned char *p) {
  return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
         (uint64_t)p[3] << 24;
}

static uint64_t round64(uint64_t acc, uint64_t in) {
  return rotl(acc + in * P2, 31) * P1;
}

static uint64_t merge(uint64_t h, uint64_t lane) {
  return (h ^ round64(0, lane)) * P1 + P4;
}

uint64_t wv_xxh64(const void *data, size_t len, uint64_t seed) {
  const unsigned char *p = data, *end = p + len;
  uint64_t h;
  if (len >= 32) {
    uint64_t v[4] = {seed + P1 + P2, seed + P2, seed, seed - P1};
    for (; end - p >= 32; p += 32)
      for (int i = 0; i < 4; i++)
        v[i] = round64(v[i], le64(p + 8 * i));
    h = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
    for (int i = 0; i < 4; i++)
      h = merge(h, v[i]);
  } else {
    h = seed + P5;
  }
  h += (uint64_t)len;
  for (; end - p >= 8; p += 8)
    h = rotl(h ^ round64(0, le64(p)), 27) * P1 + P4;
  if (end - p >= 4) {
    h = rotl(h ^ le32(p) * P1, 23) * P2 + P3;
    p += 4;
  }
  for (; p < end; p++)
    h = rotl(h ^ *p * P5, 11) * P1;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}
