/* The GPU runtime: the CUDA driver API, loaded at run time with
 * dlopen("libcuda.so.1") so that nothing links against CUDA and the library
 * builds, and its CPU tests run, on machines without a GPU or a driver;
  * GPU modules (wavec_module: a kernel's launch shape, arguments and
 * cubin) and the disk cache that keeps them across processes.
 * wavec_gpu_load, wavec_module_launch and wavec_gpu_run (wavec.h) are
 * built on this. */
#ifndef WV_RUNTIME_H
#define WV_RUNTIME_H

#include "support/base.h"

/* The driver and a device's context. */
typedef struct wv_cuda wv_cuda;

/* Loads the driver and initialises it. The context is the calling
 * thread's current one when it has one (a framework such as PyTorch made
 * it current), else the first device's primary context, retained and made
 * current. NULL with a D_GPU diagnostic (WAVEC_ERR_RUNTIME) in ctx at loc
 * when there is no driver ("no CUDA driver (libcuda.so.1 not found)"), it
 * lacks an entry point, or there is no device. */
wv_cuda *wv_cuda_open(wavec_ctx *ctx, wavec_loc loc);
/* Releases what wv_cuda_open retained and unloads the driver; cu may be
 * NULL. */
void wv_cuda_close(wv_cuda *cu);
/* ctx's driver, opened by its first call (and closed by wavec_ctx_free);
 * unwinds with wv_cuda_open's diagnostic. */
wv_cuda *wv_ctx_cuda(wavec_ctx *ctx, wavec_loc loc);
/* The device's compute capability times ten (90 for an H100 or H200). */
int wv_cuda_sm(const wv_cuda *cu);
/* The PTX target wavec prints for a device of compute capability sm (x10):
 * "sm_90" from 9.0 on (the driver compiles the PTX for the actual device),
 * "sm_80" for 8.x, NULL below 8.0 (mma.sync m16n8k16 needs sm_80). A
 * kernel that needs sm_90a's own instructions (wgmma) gets "sm_90a" on a
 * 9.0 device and NULL elsewhere (architecture-specific PTX runs on that
 * architecture only). */
const char *wv_cuda_ptx_target(int sm, bool needs_90a);
/* Builds tensor map m (wavec_tensor_map_info) of argument a (its
 * wavec_arg_info) over device memory at dptr into out, 128 bytes aligned
 * to 64, through cuTensorMapEncodeTiled; a D_GPU diagnostic at loc when the
 * driver lacks it or refuses. Every launcher of a kernel with tensor maps
 * passes them after the argument pointers. */
wavec_status wv_cuda_tensor_map(wv_cuda *cu, wavec_loc loc,
                                const wavec_tensor_map_info *m,
                                const wavec_arg_info *a,
                                unsigned long long dptr, void *out);

/* ---- GPU modules (wavec.h: wavec_module) ---------------------------------- */
/* A run-time size of a module (a dynamic dim) and how a launch gets it. */
typedef struct wv_module_size {
  const char *name; /* the dimension's */
  int64_t multiple; /* its stated multiple (1: none) */
  int64_t most;     /* its largest value (tir_size) */
  int64_t now;      /* its value for the next launch; 0 until given */
  uint64_t from;    /* the arguments (bit i: argument i) whose shapes gave
                       it since the last launch */
} wv_module_size;

/* A tensor map a launch encoded and what it encoded it over (the
 * argument's address and shape): the next launch over the same passes the
 * same bytes without encoding them again. */
typedef struct wv_tmap_memo {
  unsigned char map[128]; /* a CUtensorMap */
  unsigned long long dptr;
  int64_t shape[WAVEC_MAX_DIMS];
  bool valid;
} wv_tmap_memo;

#define WV_BIN_MODS 8 /* CUDA contexts one module is loaded into at most */
#define WV_MAX_LAUNCH_ARGS 64 /* kernel parameters one launch passes */
#define WV_MAX_TMAPS 16       /* tensor maps of one launch */
#define WV_MAX_SIZES 8        /* run-time sizes of one launch */

struct wavec_module {
  wavec_ctx *ctx;
  const char *kernel, *entry; /* the kernel's name; its PTX .entry name */
  const char *target;         /* PTX target: sm_80, sm_89, sm_90, sm_90a */
  const char *desc;           /* what it was built from, for listings */
  uint32_t grid[3], block[3];
  uint64_t smem;              /* bytes of shared memory */
  uint32_t nargs;
  wavec_arg_info *args;
  uint32_t *align;            /* by argument: the alignment in bytes its
                                 pointer must have (tir_arg_align) */
  uint32_t ntmaps;            /* tensor maps passed after the pointers */
  wavec_tensor_map_info *tmaps;
  wv_tmap_memo *tmap_memo;    /* by tensor map: the last one encoded (NULL
                                 until a launch encodes one) */
  /* run-time sizes (dynamic dims), passed as .u32 after the tensor maps:
   * each launch takes them from its arguments' shapes
   * (wavec_module_arg_shape), and its grid and the shapes of the other
   * arguments with them (module_sizes) */
  uint32_t nsizes;
  wv_module_size *sizes;
  uint32_t (*dyn)[WAVEC_MAX_DIMS]; /* by argument and dim: 1 + its size, 0
                                      when the dim is fixed */
  uint32_t grid_size[3];      /* 1 + the size whose tiles a grid axis
                                 counts, 0: a fixed axis */
  int64_t grid_tile[3];
  int64_t persistent;         /* persistent tiles: the grid is min(tiles,
                                 this) along x (tir_prog's), or 0 */
  int64_t tiles[3];           /* then the fixed axes' tiles */
  const void *code;           /* the cubin */
  size_t code_len;
  uint64_t key[2];            /* its cache key; 0, 0 when not keyed */
  bool cached;                /* read from the disk cache */
  uint32_t nmods;             /* loaded modules, one per CUDA context */
  struct {
    void *cuctx, *mod, *fn;
  } mods[WV_BIN_MODS];
};

/* The module of kernel `name` (or k when given: compiled, or compiled
 * here) for target with `flags` (wavec_gpu_load's), through the disk
 * cache; unwinds on error. */
wavec_module *wv_load(wavec_ctx *ctx, wv_kernel *k, const char *name,
                      const char *target, unsigned flags);
/* A module of compiled kernel k for target without code: its entry name,
 * launch shape and arguments. */
wavec_module *wv_module_of(wavec_ctx *ctx, wv_kernel *k, const char *target);

/* The module as bytes (the disk cache's entry format), appended to out. */
void wv_module_write(const wavec_module *b, wv_buf *out);
/* Parses an entry: NULL when the bytes are not a whole, intact entry of
 * this format whose key is `key` (corrupt, truncated or stale). */
wavec_module *wv_module_read(wavec_ctx *ctx, const void *data, size_t len,
                             const uint64_t key[2]);

/* ---- ptxas ---------------------------------------------------------------------------- */
/* The toolkit's ptxas: $WAVEC_PTXAS, else $CUDA_HOME/bin/ptxas, else
 * /usr/local/cuda/bin/ptxas, else the first on $PATH; NULL when none. */
const char *wv_ptxas_path(wavec_ctx *ctx);
/* What the cache key holds of it: its path, size and modification time
 * (a stat, no process: a different ptxas is a different key). */
const char *wv_ptxas_identity(wavec_ctx *ctx, const char *ptxas);
/* Its CUDA version as the driver counts it (13000 for 13.0; `ptxas
 * --version`, a process), or 0 when it cannot be told. */
int wv_ptxas_version(const char *ptxas);
/* Assembles ptx (len bytes) for target with `ptxas -O3 -lineinfo` into a
 * cubin in the arena; unwinds with a D_GPU diagnostic at loc holding
 * ptxas's output when it fails. */
void wv_ptxas(wavec_ctx *ctx, wavec_loc loc, const char *ptxas,
              const char *target, const char *ptx, size_t len,
              const void **cubin, size_t *cubin_len);

/* ---- the disk cache ------------------------------------------------------------ */
/* The cache folder: $WAVEC_CACHE_DIR, else $XDG_CACHE_HOME/wavec, else
 * $HOME/.cache/wavec; NULL when none can be named. */
const char *wv_cache_dir(wavec_ctx *ctx);
/* The key of kernel `kernel` of ctx built for `target` by `toolchain` (the
 * tool that makes the machine code and its version): XXH64 (two seeds)
 * over the sources parsed into ctx (names and texts), the kernel name,
 * the definitions (sorted by name), the hardware overrides, planted test
 * bugs, wavec's version and the identity of its sources (WV_SOURCE_ID, a
 * checksum of the library's sources taken by the build), the target and
 * the toolchain. False when ctx has no source (a kernel built with the
 * builder API): nothing to key on. *desc: a one-line description. */
bool wv_cache_key(wavec_ctx *ctx, const char *kernel, const char *target,
                  const char *toolchain, uint64_t key[2], const char **desc);
/* The entry of key, read whole into the arena; false when there is none or
 * it cannot be read. */
bool wv_cache_get(wavec_ctx *ctx, const uint64_t key[2], const void **data,
                  size_t *len);
/* Stores an entry: written to a temporary file of a unique name in the
 * cache folder (wv_write_file), then renamed over the entry, so that readers and
 * concurrent writers never see a partial file. False when it could not be
 * stored (a cache that cannot be written is not an error). */
bool wv_cache_put(wavec_ctx *ctx, const uint64_t key[2], const void *data,
                  size_t len);

#endif
