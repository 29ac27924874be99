/* NumPy .npy files (format versions 1.0, 2.0 and 3.0), for the CLI and the
 * tests: not used inside a context, so memory comes from plain malloc.
 *
 * Supported element types (descr), little-endian only, C order only:
 *   "<f2" f16   "<f4" f32   "<u2" 16-bit raw bits (bf16: the caller knows)
 *   "<i4" i32   "|b1" bool (one byte; read back as 0 or 1)
 * Rank 0 (a scalar, shape ()) to WV_NPY_MAX_DIMS.
 *
 * Every function returns 0 on success, or -1 with a one-line message in
 * err[errlen] (err may be NULL). The reader checks every length, count and
 * character against the bytes actually present: no input makes it read out
 * of bounds, overflow, or allocate more than the file holds.
 * Thread safety: no shared state; distinct calls are independent. */
#ifndef WV_NPY_H
#define WV_NPY_H

#include <stddef.h>
#include <stdint.h>

#define WV_NPY_MAX_DIMS 8
/* Longest header (dictionary text) the reader accepts, as NumPy does. */
#define WV_NPY_MAX_HEADER 65536

typedef struct wv_npy {
  char descr[8]; /* one of the descr strings above, NUL-terminated */
  int ndim;
  int64_t shape[WV_NPY_MAX_DIMS];
  void *data;    /* C order, nbytes long; malloc'd, never NULL after a read */
  size_t nbytes; /* count * itemsize */
} wv_npy;

/* Bytes per element of a supported descr, 0 for anything else. */
size_t wv_npy_itemsize(const char *descr);
/* Elements: the product of the shape (1 for rank 0). */
int64_t wv_npy_count(const wv_npy *a);

/* Reads a whole file. On failure *out is zeroed and nothing is left
 * allocated. Free the result with wv_npy_free. */
int wv_npy_read(const char *path, wv_npy *out, char *err, size_t errlen);
void wv_npy_free(wv_npy *a); /* frees data, zeroes *a; NULL-safe */

/* Parses the preamble and header of a file held in memory (buf[len], at least
 * the header; the data may be absent) into *out, leaving out->data NULL; sets
 * *data_offset to where the data starts. For fuzzing and for readers of
 * their own. */
int wv_npy_parse_header(const void *buf, size_t len, wv_npy *out,
                        size_t *data_offset, char *err, size_t errlen);

/* Writes data (count * itemsize bytes, C order) with the given descr and
 * shape through wv_write_file (support/outfile.h): a regular file is
 * replaced whole or not at all, a device or FIFO is written through. */
int wv_npy_write(const char *path, const char *descr, int ndim,
                 const int64_t *shape, const void *data, char *err,
                 size_t errlen);

#endif
