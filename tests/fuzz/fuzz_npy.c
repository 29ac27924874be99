/* Fuzz target for the .npy reader (src/support/npy.c): any bytes, as a
 * header in memory and as a file, must be read or refused with a message,
 * never read out of bounds or allocate more than the file holds; what is
 * read must be consistent (the shape's bytes are the data's), and writing
 * it back and reading that gives the same array. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "support/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char in_path[128], out_path[128];

static void remove_files(void) {
  unlink(in_path);
  unlink(out_path);
}

/* Two scratch files of this process, removed once read. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *dir = getenv("TMPDIR");
  snprintf(in_path, sizeof in_path, "%.40s/wvnpy-%ld-in.npy",
           dir && *dir ? dir : "/tmp", (long)getpid());
  snprintf(out_path, sizeof out_path, "%.40s/wvnpy-%ld-out.npy",
           dir && *dir ? dir : "/tmp", (long)getpid());
  atexit(remove_files);
  return 0;
}

static void fail(const char *what, const char *err) {
  fprintf(stderr, "npy: %s%s%s\n", what, err ? ": " : "", err ? err : "");
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!in_path[0])
    LLVMFuzzerInitialize(NULL, NULL);
  wvf_reach(0, "inputs");
  char err[256] = "";
  wv_npy h;
  size_t off = 0;
  int hr = wv_npy_parse_header(data, size, &h, &off, err, sizeof err);
  if (hr == 0) {
    wvf_reach(1, "header read");
    if (off > size || !wv_npy_itemsize(h.descr) || h.data ||
        h.nbytes != (size_t)wv_npy_count(&h) * wv_npy_itemsize(h.descr))
      fail("inconsistent header", NULL);
  } else if (!err[0]) {
    fail("a header refused without a message", NULL);
  }
  FILE *f = fopen(in_path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
    fail("cannot write the scratch file", in_path);
  wv_npy a;
  err[0] = 0;
  int ar = wv_npy_read(in_path, &a, err, sizeof err);
  unlink(in_path); /* (a crash leaves no scratch file behind) */
  if (ar != 0) {
    if (!err[0] || a.data || a.ndim)
      fail("a file refused without a message, or with data left", err);
    return 0;
  }
  wvf_reach(2, "file read");
  /* the file reader accepts exactly the headers the memory reader does,
   * with exactly the data the header asks for */
  if (hr != 0 || strcmp(a.descr, h.descr) != 0 || a.ndim != h.ndim ||
      a.nbytes != h.nbytes || size - off != a.nbytes || !a.data)
    fail("the file reader and the header reader disagree", err);
  if (wv_npy_write(out_path, a.descr, a.ndim, a.shape, a.data, err,
                   sizeof err) != 0)
    fail("cannot write back what was read", err);
  wv_npy b;
  int br = wv_npy_read(out_path, &b, err, sizeof err);
  unlink(out_path);
  if (br != 0)
    fail("cannot read back what was written", err);
  if (strcmp(a.descr, b.descr) != 0 || a.ndim != b.ndim ||
      memcmp(a.shape, b.shape, sizeof a.shape) != 0 || a.nbytes != b.nbytes ||
      memcmp(a.data, b.data, a.nbytes) != 0)
    fail("written and read back, the array differs", NULL);
  wvf_reach(3, "written back");
  wv_npy_free(&a);
  wv_npy_free(&b);
  return 0;
}
