/* Output files: the one way wavec writes a file a user named (-o, --out,
 * --svg). Not used inside a context: plain POSIX calls, no allocation
 * through it.
 *
 * What is at the path decides, as for cc, nvcc and ptxas:
 *  - anything that is not a regular file (a device such as /dev/null, a
 *    FIFO, a terminal), and every path under /dev/ or /proc/ (/dev/stdout,
 *    /dev/fd/N): written through, in place;
 *  - a symbolic link: followed, to the regular file (or the place of a new
 *    one) it leads to; the link stays a link;
 *  - a regular file, or nothing yet: the bytes go to a new temporary file
 *    made by mkstemp in the same directory, which is renamed over the path
 *    once complete, so the path holds either its old content or the whole
 *    new one, never a part; on failure the temporary is removed. A replaced
 *    file keeps its permission bits; a new one gets 0666 less the umask.
 * Directories are refused. Two writers of one path at once each leave a
 * whole file; the last rename wins.
 *
 * Thread safety: no shared state, except that with no /proc the umask is
 * read by setting and restoring it (process-wide). */
#ifndef WV_OUTFILE_H
#define WV_OUTFILE_H

#include <stddef.h>

typedef struct wv_span {
  const void *p;
  size_t n;
} wv_span;

/* Writes parts[0..nparts) one after the other to path as above. 0, or -1
 * with "PATH: cannot write: REASON" in err[errlen] (err may be NULL). */
int wv_write_file(const char *path, const wv_span *parts, size_t nparts,
                  char *err, size_t errlen);

/* One of the files wv_write_files writes. */
typedef struct wv_outfile {
  const char *path;
  const wv_span *parts;
  size_t nparts;
} wv_outfile;
#define WV_WRITE_FILES_MAX 4

/* Writes files[0..nfiles) (at most WV_WRITE_FILES_MAX) all or none: each
 * must be a regular file or a new one (anything written through above is
 * refused, before anything is written); each goes to its own temporary
 * file beside it, and only once every temporary is complete are they
 * renamed over their paths, in order. On any failure before that the
 * temporaries are removed and every path keeps its old content; only a
 * rename that fails after an earlier one succeeded (an error of the file
 * system: the temporaries are in the target's own directory) leaves the
 * earlier paths new. 0, or -1 with "PATH: cannot write: REASON" in
 * err[errlen] (err may be NULL). */
int wv_write_files(const wv_outfile *files, size_t nfiles, char *err,
                   size_t errlen);

#endif
