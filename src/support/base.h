/* Internal foundation: the context, its arena, growable arrays, string
 * buffers, diagnostics and error unwinding.
 *
 * Error model (as in Lua): every public entry point sets a recovery point
 * (WV_GUARD). Allocation failure and wv_throw() longjmp to it; since all
 * memory is owned by the context's arena, unwinding leaks nothing. User
 * errors are recorded with wv_error() (first error kept, later ones ignored)
 * and either returned as a status or thrown. */
#ifndef WV_BASE_H
#define WV_BASE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wavec.h"

#define WV_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Internal bugs: never user input. Records the place and unwinds. */
#define wv_assert(ctx, cond)                                                   \
  ((cond) ? (void)0 : wv_internal((ctx), __FILE__, __LINE__, #cond))

/* ---- arena ---------------------------------------------------------------- */
typedef struct wv_chunk wv_chunk;
typedef struct wv_big wv_big;
typedef struct wv_arena {
  wv_chunk *head;
  char *cur, *end;
  size_t total;
} wv_arena;

/* Zeroed memory from the context arena; never NULL (unwinds on failure). */
void *wv_alloc(wavec_ctx *ctx, size_t n);
void *wv_dup(wavec_ctx *ctx, const void *p, size_t n);
char *wv_strdup(wavec_ctx *ctx, const char *s);
char *wv_strndup(wavec_ctx *ctx, const char *s, size_t n);
/* Grows *p (holding *cap elements of size elt) to hold at least need.
 * Arrays of 64 KiB or more get blocks of their own (base.c) and move: a
 * pointer to an element is invalid once the array grows. */
void wv_grow(wavec_ctx *ctx, void **p, uint32_t *cap, uint32_t need,
             size_t elt);
/* wv_grow for an array whose elements its users point to across growth:
 * the old copies stay readable (in the arena) until the context is freed. */
void wv_grow_stable(wavec_ctx *ctx, void **p, uint32_t *cap, uint32_t need,
                    size_t elt);
/* Zeroed memory like wv_alloc; 64 KiB or more in a block of its own that
 * wv_release can give back before the context is freed. */
void *wv_alloc_big(wavec_ctx *ctx, size_t n);
/* Gives back what wv_alloc_big or a growable array holds in a block of its
 * own (the memory of what a pass replaced); arena memory stays until the
 * context is freed. p may be NULL. Nothing may use p afterwards. */
void wv_release(wavec_ctx *ctx, void *p);

/* Growable arrays in the arena: `VEC(int) xs = {0};  vec_push(ctx, &xs, 3);` */
#define VEC(T)                                                                 \
  struct {                                                                     \
    T *v;                                                                      \
    uint32_t n, cap;                                                           \
  }
#define vec_push(ctx, vec, x)                                                  \
  do {                                                                         \
    if ((vec)->n == (vec)->cap)                                                \
      wv_grow((ctx), (void **)&(vec)->v, &(vec)->cap, (vec)->n + 1,            \
              sizeof(*(vec)->v));                                              \
    (vec)->v[(vec)->n++] = (x);                                                \
  } while (0)

typedef VEC(uint32_t) wv_ids;

/* ---- string buffer ------------------------------------------------------- */
typedef struct wv_buf {
  wavec_ctx *ctx;
  char *s;
  uint32_t n, cap; /* s is always NUL-terminated once anything was added */
} wv_buf;
void wv_buf_init(wv_buf *b, wavec_ctx *ctx);
void wv_buf_add(wv_buf *b, const char *s, size_t n);
void wv_buf_puts(wv_buf *b, const char *s);
void wv_buf_printf(wv_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void wv_buf_vprintf(wv_buf *b, const char *fmt, va_list ap);
const char *wv_buf_str(wv_buf *b); /* "" when empty */

/* ---- diagnostics --------------------------------------------------------- */
/* Every user-facing diagnostic, declared once: name, stable number, status,
 * summary. Numbers never change meaning once released. */
#define WV_DIAGS(X)                                                            \
  X(D_BAD_CHAR, 101, WAVEC_ERR_SYNTAX, "invalid character")                    \
  X(D_BAD_NUMBER, 102, WAVEC_ERR_SYNTAX, "malformed number")                   \
  X(D_EXPECTED, 103, WAVEC_ERR_SYNTAX, "unexpected token")                     \
  X(D_UNKNOWN_OP, 104, WAVEC_ERR_SYNTAX, "unknown operation")                  \
  X(D_BAD_KWARG, 105, WAVEC_ERR_SYNTAX, "unknown or repeated keyword argument") \
  X(D_NO_KERNEL, 106, WAVEC_ERR_SYNTAX, "no kernel in the source")             \
  X(D_TOO_DEEP, 107, WAVEC_ERR_SYNTAX, "nesting too deep")                    \
  X(D_MISPLACED, 108, WAVEC_ERR_SYNTAX, "statement or block out of place")     \
  X(D_UNKNOWN_NAME, 201, WAVEC_ERR_TYPE, "unknown name")                       \
  X(D_REDEFINED, 202, WAVEC_ERR_TYPE, "name defined twice")                    \
  X(D_UNKNOWN_DIM, 203, WAVEC_ERR_TYPE, "unknown dimension")                   \
  X(D_UNKNOWN_DTYPE, 204, WAVEC_ERR_TYPE, "unknown element type")              \
  X(D_UNKNOWN_MMA, 205, WAVEC_ERR_TYPE, "unknown mma type")                    \
  X(D_NOT_MEMORY, 206, WAVEC_ERR_TYPE, "not a memory argument")                \
  X(D_NOT_REGISTER, 207, WAVEC_ERR_TYPE, "not a register value")               \
  X(D_DUP_DIM, 208, WAVEC_ERR_TYPE, "dimension repeated")                      \
  X(D_MMA_SHAPE, 301, WAVEC_ERR_TYPE, "mma operand shapes do not fit")         \
  X(D_MMA_DTYPE, 302, WAVEC_ERR_TYPE, "mma operand element types do not fit")  \
  X(D_PERMUTE, 303, WAVEC_ERR_TYPE, "permute is not a permutation")            \
  X(D_BINARY_DIMS, 304, WAVEC_ERR_TYPE, "operand dimensions are incompatible") \
  X(D_DTYPE_MISMATCH, 305, WAVEC_ERR_TYPE, "element types differ")             \
  X(D_BROADCAST, 306, WAVEC_ERR_TYPE, "broadcast does not keep the dimensions") \
  X(D_REDUCE_DIM, 307, WAVEC_ERR_TYPE, "reduced dimension not in operand")     \
  X(D_WRITE_SHAPE, 308, WAVEC_ERR_TYPE, "written value does not fit memory")   \
  X(D_MAPPING, 309, WAVEC_ERR_TYPE, "invalid mapping")                         \
  X(D_LOOP, 310, WAVEC_ERR_TYPE, "invalid iterate")                            \
  X(D_YIELD, 311, WAVEC_ERR_TYPE, "yield does not match the carried values")   \
  X(D_SELECT, 312, WAVEC_ERR_TYPE, "select condition is not i1")               \
  X(D_ARITY, 313, WAVEC_ERR_TYPE, "wrong number of operands")                  \
  X(D_EPT, 314, WAVEC_ERR_TYPE, "elements_per_thread is not positive")         \
  X(D_NOT_INT, 315, WAVEC_ERR_TYPE, "integer expected")                        \
  X(D_CONSTRAINT_DIM, 401, WAVEC_ERR_CONSTRAINT,                               \
    "constraint names a dimension no tensor has")                              \
  X(D_CONSTRAINT_DUP, 402, WAVEC_ERR_CONSTRAINT, "constraint given twice")     \
  X(D_CONSTRAINT_AXIS, 403, WAVEC_ERR_CONSTRAINT, "invalid grid axis")         \
  X(D_HARDWARE, 404, WAVEC_ERR_CONSTRAINT, "invalid hardware entry")           \
  X(D_TILE_DIVIDE, 405, WAVEC_ERR_CONSTRAINT, "tile does not divide")          \
  X(D_TILE_POSITIVE, 406, WAVEC_ERR_CONSTRAINT, "tile is not positive")        \
  X(D_REGISTERS, 407, WAVEC_ERR_CONSTRAINT, "tiles need too many registers")   \
  X(D_SCHEDULE, 408, WAVEC_ERR_CONSTRAINT,                                     \
    "warp specialization or persistent tiles cannot apply")                    \
  X(D_PARTIAL, 409, WAVEC_ERR_CONSTRAINT,                                      \
    "a partial sum is used other than by an adding write")                     \
  X(D_HW_OVERRIDE, 410, WAVEC_ERR_INVALID,                                     \
    "invalid hardware override (wavec_hardware_override, --hardware)")        \
  X(D_UNBOUND, 501, WAVEC_ERR_BIND, "unbound hyperparameter")                  \
  X(D_NOT_EXACT, 502, WAVEC_ERR_BIND, "division is not exact")                 \
  X(D_DIV_ZERO, 503, WAVEC_ERR_BIND, "division by zero")                       \
  X(D_FLOAT_SHAPE, 504, WAVEC_ERR_BIND, "float hyperparameter used as a size") \
  X(D_BAD_DEFINE, 505, WAVEC_ERR_BIND, "invalid definition")                   \
  X(D_TOO_LARGE, 506, WAVEC_ERR_BIND, "tensor too large")                      \
  X(D_OVERFLOW, 507, WAVEC_ERR_BIND, "integer overflow")                       \
  X(D_SIM_OOB, 601, WAVEC_ERR_RUNTIME, "out-of-bounds access")                 \
  X(D_SIM_UNINIT, 602, WAVEC_ERR_RUNTIME, "read of unwritten memory")         \
  X(D_SIM_RACE, 603, WAVEC_ERR_RUNTIME, "shared-memory race")                 \
  X(D_SIM_BARRIER, 604, WAVEC_ERR_RUNTIME, "barrier not reached by all")      \
  X(D_SIM_CONFLICT, 605, WAVEC_ERR_RUNTIME, "conflicting global writes")      \
  X(D_SIM_UNWRITTEN, 606, WAVEC_ERR_RUNTIME, "output not fully written")      \
  X(D_GPU, 607, WAVEC_ERR_RUNTIME, "GPU runtime error")                        \
  X(D_SIM_ASYNC, 608, WAVEC_ERR_RUNTIME, "asynchronous copy not waited for")   \
  X(D_SIM_DEADLOCK, 609, WAVEC_ERR_RUNTIME, "a wait that can never complete") \
  X(D_SIM_MBARRIER, 610, WAVEC_ERR_RUNTIME, "mbarrier misuse")                 \
  X(D_CACHE, 611, WAVEC_ERR_RUNTIME, "compile cache error")                    \
  X(D_ARG_FILE, 612, WAVEC_ERR_RUNTIME, "argument file does not fit")          \
  X(D_MACHINE, 613, WAVEC_ERR_RUNTIME, "not available on this machine")        \
  X(D_SIM_BUDGET, 614, WAVEC_ERR_RUNTIME, "simulation past its step budget")    \
  X(D_SIM_REGS, 615, WAVEC_ERR_RUNTIME, "register budget misuse (setmaxnreg)")  \
  X(D_SIM_GRACE, 616, WAVEC_ERR_RUNTIME, "global-memory race")                 \
  X(D_UNSUPPORTED, 701, WAVEC_ERR_UNSUPPORTED, "not supported by the target")  \
  X(D_INVALID, 901, WAVEC_ERR_INVALID, "invalid argument")                     \
  X(D_NOMEM, 902, WAVEC_ERR_NOMEM, "out of memory")                            \
  X(D_INTERNAL, 999, WAVEC_ERR_INTERNAL, "internal error")

typedef enum wv_diag_id {
#define X(e, num, st, summary) e,
  WV_DIAGS(X)
#undef X
      D__COUNT
} wv_diag_id;

int wv_diag_number(wv_diag_id d);

typedef struct wv_diag {
  wv_diag_id id;
  wavec_loc loc;
  size_t offset;
  char *msg;
} wv_diag;

/* Records a diagnostic (the first error only; later ones are dropped so that
 * one mistake gives one message) and returns its status. */
wavec_status wv_error(wavec_ctx *ctx, wv_diag_id id, wavec_loc loc,
                      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* wv_error, then unwind to the innermost guard. */
_Noreturn void wv_fail(wavec_ctx *ctx, wv_diag_id id, wavec_loc loc,
                       const char *fmt, ...) __attribute__((format(printf, 4, 5)));
_Noreturn void wv_throw(wavec_ctx *ctx); /* unwind with the recorded error */
/* A public function's pointer parameter `param` is NULL where it needs one:
 * WAVEC_ERR_INVALID, with a diagnostic "FN: PARAM is NULL" in ctx when there
 * is a context (ctx may be NULL). Needs no guard. */
wavec_status wv_null_param(wavec_ctx *ctx, const char *fn, const char *param);
/* Whether name is an identifier ([A-Za-z_][A-Za-z0-9_]*, as the lexer reads
 * one): what a name that reaches the emitted PTX and C must be. */
bool wv_is_ident(const char *name);
_Noreturn void wv_internal(wavec_ctx *ctx, const char *file, int line,
                           const char *what);
bool wv_failed(wavec_ctx *ctx);

/* Source texts known to the context, for carets. */
void wv_add_source(wavec_ctx *ctx, const char *file, const char *text,
                   size_t len);

/* The line end at p, if any: "\n", "\r\n" or a lone "\r" (old Mac files)
 * each end one line. Returns its length in bytes (0 where none starts). The
 * lexer and the carets count lines with it, so that they agree. */
static inline size_t wv_line_end_len(const char *p, const char *end) {
  if (p >= end || (*p != '\n' && *p != '\r'))
    return 0;
  return *p == '\r' && p + 1 < end && p[1] == '\n' ? 2 : 1;
}

/* The length of a UTF-8 byte-order mark at the start of a source (3, or 0):
 * it is no part of the first line, whose columns count from after it, as
 * editors show them. */
static inline size_t wv_bom_len(const char *text, size_t len) {
  return len >= 3 && (unsigned char)text[0] == 0xef &&
                 (unsigned char)text[1] == 0xbb &&
                 (unsigned char)text[2] == 0xbf
             ? 3
             : 0;
}

/* ---- guards ---------------------------------------------------------------- */
typedef struct wv_guard {
  jmp_buf jb;
  struct wv_guard *prev;
} wv_guard;

/* Usage in a public function:
 *   WV_GUARD(ctx, 0);            // returns 0 if anything below unwinds
 *   r = impl(...);
 *   WV_UNGUARD(ctx);  return r;
 * Nothing modified between the two may be read on the failure path. */
#define WV_GUARD(ctx, failret)                                                 \
  wv_guard wv_g_;                                                              \
  wv_g_.prev = (ctx)->guard;                                                   \
  (ctx)->guard = &wv_g_;                                                       \
  if (setjmp(wv_g_.jb)) {                                                      \
    (ctx)->guard = wv_g_.prev;                                                 \
    return failret;                                                            \
  }
#define WV_UNGUARD(ctx) ((ctx)->guard = wv_g_.prev)

/* ---- timing ---------------------------------------------------------------- */
uint64_t wv_now_ns(void);

/* ---- the context ------------------------------------------------------------ */
typedef struct wv_exprs wv_exprs; /* src/expr/expr.h */
typedef struct wv_kernel wv_kernel;

typedef struct wv_source {
  const char *file;
  const char *text;
  size_t len;
} wv_source;

typedef struct wv_define {
  const char *name;
  bool is_float;
  int64_t i;
  double f;
} wv_define;

typedef struct wv_time {
  const char *name;
  uint64_t ns;
} wv_time;

/* Called by wavec_ctx_free, latest first, before the arena goes: what the
 * context holds outside its arena (the CUDA driver, loaded modules). */
typedef struct wv_cleanup {
  void (*fn)(void *ud);
  void *ud;
} wv_cleanup;

struct wavec_ctx {
  wavec_alloc_fn alloc;
  void *alloc_ud;
  wv_arena arena;
  wv_guard *guard;
  wavec_status status; /* of the first error, WAVEC_OK if none */
  VEC(wv_diag) diags;
  VEC(wv_source) sources;
  wv_buf errbuf;
  wv_exprs *ex;
  VEC(const char *) sym_names; /* by wavec_sym; 0 is unused */
  struct wv_strmap *sym_map;
  VEC(wv_define) defines;
  VEC(wv_kernel *) kernels;
  VEC(wv_time) times;
  uint64_t test_hooks; /* WV_HOOK_* bits: planted bugs for tests */
  wv_big *bigs;        /* the big growable arrays (base.c) */
  size_t big_total;    /* their bytes */
  /* The source place being worked on (a builder call's, the node a pass is
   * at, else the kernel's): errors that have no place of their own, an
   * index expression that overflows or memory running out, are reported
   * there. {0} outside of the library's entry points. */
  wavec_loc at;
  wavec_loc oom_at;    /* `at` when memory ran out, and what was asked */
  size_t oom_asked;
  char oom_text[2048]; /* wavec_errmsg's text when memory ran out */
  int64_t hw_threads; /* --hardware overrides; 0 / -1 when unset */
  int hw_mma;
  int64_t hw_ints[WAVEC_HW_INT_COUNT]; /* -1 when unset (0 may be set) */
  VEC(wv_cleanup) cleanups;
  struct wv_cuda *cuda; /* the driver, opened by the first GPU call */
};

/* Registers fn(ud) to run when ctx is freed. */
void wv_on_free(wavec_ctx *ctx, void (*fn)(void *ud), void *ud);

/* Test hooks (wavec_test_hook): each plants one bug so that a test can show
 * the checker that should catch it does. */
#define WV_HOOKS(X)                                                            \
  X(WV_HOOK_BREAK_EXPAND_LOOKUP, "expand-lookup")                              \
  X(WV_HOOK_DROP_BARRIER, "drop-barrier")                                      \
  X(WV_HOOK_DROP_REUSE_BARRIERS, "drop-reuse-barriers")                        \
  X(WV_HOOK_SHIFT_LANE, "shift-lane")                                          \
  X(WV_HOOK_NO_STAGING, "no-staging")                                          \
  X(WV_HOOK_NO_PIPELINE, "no-pipeline")                                        \
  X(WV_HOOK_NO_LDMATRIX, "no-ldmatrix")                                        \
  X(WV_HOOK_RING_EARLY_READ, "ring-early-read")                                \
  X(WV_HOOK_RING_NO_BARRIER, "ring-no-barrier")                                \
  X(WV_HOOK_WGMMA_NO_WAIT, "wgmma-no-wait")                                    \
  X(WV_HOOK_WGMMA_NO_CARRY, "wgmma-no-carry")                                  \
  X(WV_HOOK_WGMMA_CARRY_NEAR, "wgmma-carry-near")                              \
  X(WV_HOOK_NO_MASK_SPLIT, "no-mask-split")                                    \
  X(WV_HOOK_NO_TMA, "no-tma")                                                  \
  X(WV_HOOK_TMA_EARLY_READ, "tma-early-read")                                  \
  X(WV_HOOK_TMA_EARLY_RELEASE, "tma-early-release")                            \
  X(WV_HOOK_TMA_DEADLOCK, "tma-deadlock")                                      \
  X(WV_HOOK_TMA_TX_SHORT, "tma-tx-short")                                      \
  X(WV_HOOK_TMA_NO_EMPTY_WAIT, "tma-no-empty-wait")                            \
  X(WV_HOOK_SPEC_REGS_GREEDY, "spec-regs-greedy")                              \
  X(WV_HOOK_TMA_STORE_NO_FENCE, "tma-store-no-fence")                          \
  X(WV_HOOK_TMA_STORE_NO_WAIT, "tma-store-no-wait")                            \
  X(WV_HOOK_TMA_STORE_NO_DRAIN, "tma-store-no-drain")                          \
  X(WV_HOOK_NARROW_INDEX, "narrow-index")                                      \
  X(WV_HOOK_TURN_NO_FIRST, "turn-no-first")                                    \
  X(WV_HOOK_TURN_NO_WAIT, "turn-no-wait")                                      \
  X(WV_HOOK_ADD_EVERY_COPY, "add-every-copy")                                  \
  X(WV_HOOK_TURN_EXTRA_PASS, "turn-extra-pass")                                \
  X(WV_HOOK_OVERLAP_NO_ZERO, "overlap-no-zero")                                \
  X(WV_HOOK_OVERLAP_NO_COPY, "overlap-no-copy")                                \
  X(WV_HOOK_RELEASE_EARLY, "release-early")                                    \
  X(WV_HOOK_NO_CLUSTER_BAR, "no-cluster-bar")                                  \
  X(WV_HOOK_NO_CLUSTER_TAIL, "no-cluster-tail")                                \
  X(WV_HOOK_LOCAL_RELEASE, "local-release")                                    \
  X(WV_HOOK_NO_ORDER_BARRIER, "no-order-barrier")                             \
  X(WV_HOOK_NO_COPY_FENCE, "no-copy-fence")

enum {
#define X(e, name) e##_BIT,
  WV_HOOKS(X)
#undef X
};
#define X(e, name) static const uint64_t e = 1ull << e##_BIT;
WV_HOOKS(X)
#undef X

/* String → uint32 map (interning), in the arena. */
typedef struct wv_strmap wv_strmap;
wv_strmap *wv_strmap_new(wavec_ctx *ctx);
uint32_t wv_strmap_get(wv_strmap *m, const char *s, size_t n); /* 0 if absent */
void wv_strmap_put(wv_strmap *m, const char *s, size_t n, uint32_t v);

uint64_t wv_hash_bytes(const void *p, size_t n, uint64_t seed);
static inline uint64_t wv_hash_mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

#endif
