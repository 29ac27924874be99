/* XXH64, the 64-bit hash of the xxHash family, implemented from its
 * published specification (little-endian input words); tests/unit checks
 * it against the reference implementation's outputs. The disk cache keys
 * and checks its entries with it. */
#ifndef WV_XXH64_H
#define WV_XXH64_H
#include <stddef.h>
#include <stdint.h>

uint64_t wv_xxh64(const void *data, size_t len, uint64_t seed);

#endif
