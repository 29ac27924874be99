/* wavec — a compiler for tile-level GPU kernels in the Wave model.
 *
 * Public C API. Conventions:
 *  - Opaque handles; every function takes the context (directly or through a
 *    kernel handle) that owns all memory it returns. wavec_ctx_free() frees it
 *    all at once.
 *  - Status codes: WAVEC_OK (0) on success. On failure the context keeps the
 *    first error's diagnostic: wavec_errmsg() gives it formatted
 *    ("file:line:col: error[E0123]: ..." with the source line and a caret when
 *    the source text is known), wavec_diag() gives its parts.
 *  - Builder functions return a handle, or 0 once the context holds an error;
 *    a 0 operand makes any later call return 0 without a new diagnostic, so a
 *    C user may build a whole kernel and check the status once at the end.
 *  - The library never prints and never exits. Allocation goes through the
 *    allocator given to wavec_ctx_new(); failure gives WAVEC_ERR_NOMEM.
 *  - NULL pointers: a parameter may be NULL only where its comment gives
 *    NULL a meaning (the allocator, an output that "may be NULL", a kernel
 *    name meaning every or the only kernel, the options); an array with a
 *    count may be NULL when the count is 0. Any other NULL is refused, never
 *    dereferenced: a function that returns a status gives WAVEC_ERR_INVALID,
 *    with a diagnostic in the context where there is one (the ctx, kernel
 *    or module passed); a builder function gives 0 and that diagnostic; a
 *    query gives what it gives past the last item, else 0, NULL or "".
 *    wavec_errcode(NULL) is WAVEC_ERR_INVALID and wavec_errmsg(NULL) a
 *    fixed message saying there is no context (wavec_ctx_new failed).
 *  - Thread safety: a context and everything it owns is used by one thread at
 *    a time; distinct contexts are independent (no global mutable state).
 *  - ABI: every enumerator has its number written next to it (in the X-macro
 *    tables, the second column); a number, once released, keeps its meaning
 *    (tests/unit/test_abi.c pins them all). New values take new numbers. The
 *    *_COUNT enumerators are the number of values (numbered 0..COUNT-1) and
 *    grow with them. Structs the caller fills that may grow start with
 *    `size_t size`, set to sizeof by the caller (wavec_options).
 */
#ifndef WAVEC_H
#define WAVEC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the library's API: the only names a shared libwavec exports (it is
 * built with hidden visibility by default). */
#if defined(__GNUC__) || defined(__clang__)
#define WAVEC_API __attribute__((visibility("default")))
#else
#define WAVEC_API
#endif

#define WAVEC_VERSION_MAJOR 0
#define WAVEC_VERSION_MINOR 7
#define WAVEC_VERSION_PATCH 0
#define WAVEC_VERSION_STRING "0.7.0"
/* major * 10000 + minor * 100 + patch */
#define WAVEC_VERSION_NUMBER                                                   \
  (WAVEC_VERSION_MAJOR * 10000 + WAVEC_VERSION_MINOR * 100 +                   \
   WAVEC_VERSION_PATCH)
/* The library's version (which may be newer than the header's). */
WAVEC_API const char *wavec_version(void);
WAVEC_API int wavec_version_number(void);

/* Adds 1 per table row: COUNT = number of rows. */
#define WAVEC_ROW_(...) +1

/* ---- status -------------------------------------------------------------- */
#define WAVEC_STATUSES(X)                                                      \
  X(WAVEC_OK, 0, "ok")                                                         \
  X(WAVEC_ERR_SYNTAX, 1, "syntax error")                                       \
  X(WAVEC_ERR_TYPE, 2, "type error")                                           \
  X(WAVEC_ERR_CONSTRAINT, 3, "invalid constraints")                            \
  X(WAVEC_ERR_BIND, 4, "unbound or invalid hyperparameter")                    \
  X(WAVEC_ERR_INVALID, 5, "invalid argument")                                  \
  X(WAVEC_ERR_NOMEM, 6, "out of memory")                                       \
  X(WAVEC_ERR_UNSUPPORTED, 7, "not supported")                                 \
  X(WAVEC_ERR_RUNTIME, 8, "runtime error")                                     \
  X(WAVEC_ERR_INTERNAL, 9, "internal error")

typedef enum wavec_status {
#define X(e, v, s) e = v,
  WAVEC_STATUSES(X)
#undef X
} wavec_status;

WAVEC_API const char *wavec_status_string(wavec_status s);

/* ---- context ------------------------------------------------------------- */
typedef struct wavec_ctx wavec_ctx;

/* Lua-style allocator: nsize == 0 frees ptr and returns NULL; otherwise
 * behaves like realloc(ptr, nsize) (osize is the old size, 0 for new). */
typedef void *(*wavec_alloc_fn)(void *ud, void *ptr, size_t osize,
                                size_t nsize);

WAVEC_API wavec_ctx *wavec_ctx_new(wavec_alloc_fn alloc,
                                   void *ud); /* alloc may be NULL */
WAVEC_API void wavec_ctx_free(wavec_ctx *ctx);

/* The first error's diagnostic, formatted; "" when there is none. Valid until
 * the next call on ctx. For ctx NULL, a fixed message (and
 * wavec_errcode(NULL) is WAVEC_ERR_INVALID). */
WAVEC_API const char *wavec_errmsg(wavec_ctx *ctx);
WAVEC_API wavec_status wavec_errcode(wavec_ctx *ctx);

typedef struct wavec_loc {
  const char *file;   /* may be NULL */
  uint32_t line, col; /* 1-based; 0 when unknown */
} wavec_loc;

typedef struct wavec_diag_info {
  wavec_status status;
  int code;            /* stable number, printed as E%04d */
  const char *message; /* without location or code */
  wavec_loc loc;
  size_t offset; /* byte offset into the source, or SIZE_MAX */
} wavec_diag_info;

/* Number of diagnostics (errors and notes) kept, and one of them
 * (WAVEC_ERR_INVALID when i is past the last one). */
WAVEC_API size_t wavec_diag_count(wavec_ctx *ctx);
WAVEC_API wavec_status wavec_diag(wavec_ctx *ctx, size_t i,
                                  wavec_diag_info *out);

/* Hyperparameter overrides (what `-D SYM=VALUE` sets). They apply to every
 * kernel of the context and win over a kernel's `defaults { }`. */
WAVEC_API wavec_status wavec_define_int(wavec_ctx *ctx, const char *name,
                                        int64_t v);
WAVEC_API wavec_status wavec_define_float(wavec_ctx *ctx, const char *name,
                                          double v);
/* The i-th definition whose name no kernel parsed into ctx has as a
 * symbol (usually a misspelling), or NULL past the last one. */
WAVEC_API const char *wavec_unused_define(wavec_ctx *ctx, size_t i);

/* Hardware overrides (what `--hardware KEY=VALUE,...` sets), applied to every
 * kernel compiled in ctx: `threads_per_wave` (an integer), `mma` (an mma
 * type name) and the integer entries of WAVEC_HW_INTS. WAVEC_ERR_INVALID for an
 * unknown key or a bad value, with a diagnostic (E0410) saying what is valid:
 * the keys and their values, the range, or the mma type names. */
WAVEC_API wavec_status wavec_hardware_override(wavec_ctx *ctx, const char *key,
                                               const char *value);
/* The i-th key wavec_hardware_override takes, or NULL past the last. */
WAVEC_API const char *wavec_hardware_key(size_t i);

/* ---- element types ------------------------------------------------------- */
#define WAVEC_DTYPES(X)                                                        \
  X(WAVEC_F16, 0, "f16", 16, 1)                                                \
  X(WAVEC_BF16, 1, "bf16", 16, 1)                                              \
  X(WAVEC_F32, 2, "f32", 32, 1)                                                \
  X(WAVEC_I32, 3, "i32", 32, 0)                                                \
  X(WAVEC_I1, 4, "i1", 1, 0)                                                   \
  X(WAVEC_F8E4M3, 5, "f8e4m3", 8, 1)                                           \
  X(WAVEC_F8E5M2, 6, "f8e5m2", 8, 1)                                           \
  X(WAVEC_I8, 7, "i8", 8, 0)

typedef enum wavec_dtype {
#define X(e, v, name, bits, isfloat) e = v,
  WAVEC_DTYPES(X)
#undef X
      WAVEC_DTYPE_COUNT = 0 WAVEC_DTYPES(WAVEC_ROW_)
} wavec_dtype;

WAVEC_API const char *wavec_dtype_name(wavec_dtype dt);

/* ---- mma types (ACC_MxNxK_INPUT) ---------------------------------------- */
/* 6-8 are Hopper's wgmma on 8-bit operands (sm_90a), 9-11 the warp-level
 * mma.sync on them (fp8: sm_89 and newer; i8: sm_80); the f8 ones take
 * f8e4m3 or f8e5m2 operands into an f32 accumulator, the S8 ones i8
 * operands into an i32 one. */
#define WAVEC_MMAS(X)                                                          \
  X(WAVEC_MMA_F32_16x8x16_F16, 0, "F32_16x8x16_F16")                           \
  X(WAVEC_MMA_F32_16x8x16_BF16, 1, "F32_16x8x16_BF16")                         \
  X(WAVEC_MMA_F32_16x16x16_F16, 2, "F32_16x16x16_F16")                         \
  X(WAVEC_MMA_F32_32x32x8_F16, 3, "F32_32x32x8_F16")                           \
  X(WAVEC_MMA_F32_64xNx16_F16, 4, "F32_64xNx16_F16")                           \
  X(WAVEC_MMA_F32_64xNx16_BF16, 5, "F32_64xNx16_BF16")                         \
  X(WAVEC_MMA_F32_64xNx32_F8E4M3, 6, "F32_64xNx32_F8E4M3")                     \
  X(WAVEC_MMA_F32_64xNx32_F8E5M2, 7, "F32_64xNx32_F8E5M2")                     \
  X(WAVEC_MMA_S32_64xNx32_S8, 8, "S32_64xNx32_S8")                             \
  X(WAVEC_MMA_F32_16x8x32_F8E4M3, 9, "F32_16x8x32_F8E4M3")                     \
  X(WAVEC_MMA_F32_16x8x32_F8E5M2, 10, "F32_16x8x32_F8E5M2")                    \
  X(WAVEC_MMA_S32_16x8x32_S8, 11, "S32_16x8x32_S8")

typedef enum wavec_mma_kind {
  WAVEC_MMA_NONE = -1,
#define X(e, v, name) e = v,
  WAVEC_MMAS(X)
#undef X
      WAVEC_MMA_COUNT = 0 WAVEC_MMAS(WAVEC_ROW_)
} wavec_mma_kind;

/* ---- ops ----------------------------------------------------------------- */
/* Every graph op of the API, declared once: enum, number, printed name,
 * class. (The passes add ops of their own, such as layout conversions,
 * which the API never takes or returns.) Classes:
 * U unary elementwise, B binary elementwise, C comparison (gives i1),
 * R reduction, and O for the ops with builder calls of their own.
 * On integers, `div` and `rem` truncate toward zero as in C (-7 / 2 = -3,
 * -7 % 2 = -1); `rem` takes integers only. */
#define WAVEC_OPS(X)                                                           \
  X(WAVEC_OP_ARG, 0, "arg", 'O')                                               \
  X(WAVEC_OP_SCALAR, 1, "scalar", 'O')                                         \
  X(WAVEC_OP_REGISTER, 2, "register", 'O')                                     \
  X(WAVEC_OP_READ, 3, "read", 'O')                                             \
  X(WAVEC_OP_WRITE, 4, "write", 'O')                                           \
  X(WAVEC_OP_MMA, 5, "mma", 'O')                                               \
  X(WAVEC_OP_EXP2, 6, "exp2", 'U')                                             \
  X(WAVEC_OP_EXP, 7, "exp", 'U')                                               \
  X(WAVEC_OP_LOG2, 8, "log2", 'U')                                             \
  X(WAVEC_OP_RECIPROCAL, 9, "reciprocal", 'U')                                 \
  X(WAVEC_OP_SQRT, 10, "sqrt", 'U')                                            \
  X(WAVEC_OP_RSQRT, 11, "rsqrt", 'U')                                          \
  X(WAVEC_OP_ABS, 12, "abs", 'U')                                              \
  X(WAVEC_OP_TANH, 13, "tanh", 'U')                                            \
  X(WAVEC_OP_NEG, 14, "neg", 'U')                                              \
  X(WAVEC_OP_ADD, 15, "add", 'B')                                              \
  X(WAVEC_OP_SUB, 16, "sub", 'B')                                              \
  X(WAVEC_OP_MUL, 17, "mul", 'B')                                              \
  X(WAVEC_OP_DIV, 18, "div", 'B')                                              \
  X(WAVEC_OP_MAXIMUM, 19, "maximum", 'B')                                      \
  X(WAVEC_OP_MINIMUM, 20, "minimum", 'B')                                      \
  X(WAVEC_OP_GT, 21, "gt", 'C')                                                \
  X(WAVEC_OP_LT, 22, "lt", 'C')                                                \
  X(WAVEC_OP_GE, 23, "ge", 'C')                                                \
  X(WAVEC_OP_LE, 24, "le", 'C')                                                \
  X(WAVEC_OP_EQ, 25, "eq", 'C')                                                \
  X(WAVEC_OP_NE, 26, "ne", 'C')                                                \
  X(WAVEC_OP_SELECT, 27, "select", 'O')                                        \
  X(WAVEC_OP_CAST, 28, "cast", 'O')                                            \
  X(WAVEC_OP_PERMUTE, 29, "permute", 'O')                                      \
  X(WAVEC_OP_BROADCAST, 30, "broadcast", 'O')                                  \
  X(WAVEC_OP_MAX, 31, "max", 'R')                                              \
  X(WAVEC_OP_SUM, 32, "sum", 'R')                                              \
  X(WAVEC_OP_SELF_INDEX, 33, "self_index", 'O')                                \
  X(WAVEC_OP_ITERATE, 34, "iterate", 'O')                                      \
  X(WAVEC_OP_CARRIED, 35, "carried", 'O')                                      \
  X(WAVEC_OP_YIELD, 36, "yield", 'O')                                          \
  X(WAVEC_OP_RESULT, 37, "result", 'O')                                        \
  X(WAVEC_OP_REM, 38, "rem", 'B')

typedef enum wavec_op {
#define X(e, v, name, cls) e = v,
  WAVEC_OPS(X)
#undef X
      WAVEC_OP_COUNT = 0 WAVEC_OPS(WAVEC_ROW_)
} wavec_op;

/* ---- builder ------------------------------------------------------------- */
#define WAVEC_MAX_DIMS 8 /* dimensions of one tensor type */

typedef struct wavec_kernel wavec_kernel;
typedef uint32_t wavec_sym;   /* a named symbol: dimension or hyperparameter */
typedef uint32_t wavec_expr;  /* an integer expression over symbols */
typedef uint32_t wavec_value; /* a node of the kernel graph */
typedef uint32_t wavec_mapping; /* an index mapping */
typedef uint32_t wavec_loop;    /* an iterate under construction */

/* Makes a new kernel in ctx; NULL on error (see wavec_errmsg). The name (it
 * names the PTX entry and the C launcher) must be an identifier: a letter or
 * '_', then letters, digits and '_'; else WAVEC_ERR_INVALID. */
WAVEC_API wavec_kernel *wavec_kernel_begin(wavec_ctx *ctx, const char *name,
                                           wavec_loc loc);
/* Ends the body: checks that every loop is closed and verifies the graph. */
WAVEC_API wavec_status wavec_kernel_end(wavec_kernel *k);
WAVEC_API wavec_ctx *wavec_kernel_ctx(wavec_kernel *k);
WAVEC_API const char *wavec_kernel_name(wavec_kernel *k);
/* Kernels of the context, in creation order. */
WAVEC_API size_t wavec_kernel_count(wavec_ctx *ctx);
WAVEC_API wavec_kernel *wavec_kernel_get(wavec_ctx *ctx, size_t i);
WAVEC_API wavec_kernel *wavec_kernel_find(wavec_ctx *ctx, const char *name);

/* Symbols are named once per context: the same name is the same symbol. */
WAVEC_API wavec_sym wavec_symbol(wavec_ctx *ctx, const char *name);
WAVEC_API const char *wavec_symbol_name(wavec_ctx *ctx, wavec_sym s);

/* Integer expressions. `/` (WAVEC_EXPR_DIV) is exact division: when the
 * operands are bound and it does not divide, binding fails at loc. */
typedef enum wavec_expr_op {
  WAVEC_EXPR_ADD = 0,
  WAVEC_EXPR_SUB = 1,
  WAVEC_EXPR_MUL = 2,
  WAVEC_EXPR_DIV = 3,      /* exact */
  WAVEC_EXPR_FLOORDIV = 4, /* // */
  WAVEC_EXPR_MOD = 5,      /* % */
  WAVEC_EXPR_CEILDIV = 6,
  WAVEC_EXPR_MIN = 7,
  WAVEC_EXPR_MAX = 8
} wavec_expr_op;
WAVEC_API wavec_expr wavec_expr_int(wavec_kernel *k, int64_t v);
WAVEC_API wavec_expr wavec_expr_sym(wavec_kernel *k, wavec_sym s);
WAVEC_API wavec_expr wavec_expr_binary(wavec_kernel *k, wavec_expr_op op,
                                       wavec_expr a, wavec_expr b,
                                       wavec_loc loc);

/* Arguments: dense row-major tensors, last dimension contiguous. The name (a
 * parameter of the PTX and of the C launcher) must be an identifier, as a
 * kernel's (wavec_kernel_begin); else 0 with WAVEC_ERR_INVALID. */
#define WAVEC_ARG_SHARED 1u /* stage through shared memory */
WAVEC_API wavec_value wavec_arg(wavec_kernel *k, const char *name, size_t ndims,
                                const wavec_sym *dims, wavec_dtype dt,
                                unsigned flags, wavec_loc loc);
/* Where dimension `dim` is first written in an argument's type: errors
 * about the dimension itself (no value, not positive) point there. The
 * first call for a symbol wins; without one they point at the argument. */
WAVEC_API wavec_status wavec_dim_loc(wavec_kernel *k, wavec_sym dim,
                                     wavec_loc loc);

/* Constraints. axis in 0..2. */
WAVEC_API wavec_status wavec_workgroup(wavec_kernel *k, wavec_sym dim,
                                       wavec_expr tile, int axis,
                                       wavec_loc loc);
WAVEC_API wavec_status wavec_wave(wavec_kernel *k, wavec_sym dim,
                                  wavec_expr tile, wavec_loc loc);
WAVEC_API wavec_status wavec_tiling(wavec_kernel *k, wavec_sym dim,
                                    wavec_expr tile, wavec_loc loc);
/* `dynamic(DIM)` / `dynamic(DIM, multiple_of = M)`: the size of DIM is
 * known only at launch. It becomes a kernel parameter, the grid and the
 * loop trips are computed from it, and one compiled kernel serves every
 * size; `multiple` (0: none) states that every size is a multiple of it,
 * which removes the guards at the edges of tiles that divide it. DIM must
 * be split by a workgroup or tiling constraint, and no other size may
 * depend on it. The size is given at run time by wavec_arg_shape (the
 * shape of an argument with DIM), or taken from a definition of DIM
 * (wavec_define_int) until then. DIM's name (a parameter of the C launcher)
 * must be an identifier: WAVEC_ERR_INVALID otherwise. */
WAVEC_API wavec_status wavec_dynamic(wavec_kernel *k, wavec_sym dim,
                                     wavec_expr multiple, wavec_loc loc);
/* Where the tile of the constraint just added is written: errors about the
 * tile (no value, not positive, does not divide) point there; without it,
 * at the constraint. */
WAVEC_API wavec_status wavec_constraint_tile_loc(wavec_kernel *k,
                                                 wavec_loc loc);
WAVEC_API wavec_status wavec_threads_per_wave(wavec_kernel *k, wavec_expr n,
                                              wavec_loc loc);
WAVEC_API wavec_status wavec_hardware_mma(wavec_kernel *k, wavec_mma_kind mma,
                                          wavec_loc loc);
/* Integer hardware entries, `hardware(NAME = N)`: enum, number, name, least
 * and greatest value. Unset (or 0), the compiler picks.
 *  - stages: shared-memory slots of the operand tiles an `iterate` streams;
 *    1 copies each tile where it is used, N >= 2 keeps N-1 tiles in flight
 *    ahead of the one being computed on (asynchronous copies on NVIDIA);
 *    with warpgroup mmas and N >= 3, N-2 tiles, and the last group of
 *    wgmmas of an iteration runs on into the next one.
 *  - workgroups_per_sm: how many workgroups the code generator must let
 *    share a multiprocessor (NVIDIA: .minnctapersm; it caps registers).
 *  - copies: how a ring's tiles reach shared memory: 1, asynchronous copies
 *    by every thread (cp.async); 2, tensor copies issued by one thread into
 *    an mbarrier ring (TMA: warpgroup mmas, sm_90a), which is what the
 *    compiler picks where it can.
 *  - specialize: 1, warp specialization: one more warpgroup, the
 *    producer, issues every tensor copy of the kernel's rings and nothing
 *    else, while the kernel's waves (the consumers) wait for full stages,
 *    issue the wgmmas, release the stages and write the results; setmaxnreg
 *    moves registers from the producer to the consumers. Needs tensor-copy
 *    rings (an error where there are none). 0: off. Not given: the
 *    compiler's choice (on where the rings leave room for one workgroup a
 *    multiprocessor; docs/LANGUAGE-additions.md).
 *  - persistent: 1, persistent tiles: a grid of min(tiles, sms x
 *    workgroups_per_sm) workgroups, each looping over the workgroup tiles
 *    t = its id + i x the grid, in a grouped order (group_m rows of tiles
 *    swept column by column); the mbarrier rings' phases run on from tile
 *    to tile. 0: one tile a workgroup. Not given: the compiler's choice
 *    (with specialize's, where neighbouring tiles share inputs).
 *  - sms: the multiprocessors persistent tiles fill (default 132, the
 *    H200's).
 *  - group_m: the rows of tiles of one group of the persistent raster
 *    (default 8).
 *  - stores: how the workgroup's tile of an output reaches global memory:
 *    1, every thread stores its own elements; 2, through shared memory:
 *    the threads write the tile there (128-byte swizzle), and one thread
 *    issues tensor stores (TMA, cp.async.bulk.tensor) of it, which is what
 *    the compiler picks where it can (a row-major output written once by
 *    the tile, one a kernel, in a kernel whose rings are tensor copies).
 *  - pingpong: 1, the consumer warpgroups of a specialized kernel take
 *    turns issuing their wgmmas (named barriers): a loop that waits for
 *    one group of wgmmas, works on its result and carries its last group
 *    into the next iteration (attention) gets one consumer's work off the
 *    tensor cores while another's wgmmas run. 0 or not given: off (a
 *    remark says where it would apply; measured, it gains in the attention
 *    backward and loses in the forward).
 *  - overlap: 1, a loop whose last group of wgmmas runs on into the next
 *    iteration (attention's p . v, 3 or more stages) issues it in the next
 *    iteration right after that one's first group, so that the work
 *    between them (the softmax) runs while it does. 0 or not given: off
 *    (a remark says where it would apply).
 *  - sum_parts: how write(..., reduce = add) adds a partial sum whose parts
 *    the waves of a workgroup hold (an mma over a wave-split dim): 1 or not
 *    given, the waves sum their parts in shared memory first (two
 *    barriers) and each adds 1/W of the elements; 0, each wave adds its
 *    own part (W times the atomic adds, no barrier, no shared memory).
 *  - adds: 2 or not given, write(..., reduce = add) of an f32 output in a
 *    kernel whose rings are tensor copies adds through a shared buffer by
 *    tensor reduces (cp.reduce.async.bulk.tensor .add, issued by one
 *    thread, asynchronous), where the output allows tensor stores (the
 *    one-pass backward: measured 1.1-1.15x over 1 with the producer
 *    warpgroup); 1: each thread adds its elements (red.global.add).
 *  - exchange: 1 or not given, a warpgroup mma over a dim the waves split
 *    whose result is only added to memory (write(..., reduce = add)) has
 *    wave c compute columns [c N/W, (c + 1) N/W) of it over the whole
 *    dim, its lhs (a conversion through shared memory, or a staged read)
 *    read from every wave's shared memory: no parts to sum, 1/W of the
 *    accumulator registers; 0: the waves leave parts (sum_parts).
 *  - longest_first: 1 or not given, a grid axis along which a bounded
 *    iterate's walk grows with the workgroup's tile (iterate(D <= E), E
 *    split over workgroups: a causal forward's keys) runs its tiles in
 *    reverse, block i on tile n - 1 - i, so that the longest walks are
 *    dispatched first; an axis where another walk shrinks keeps its
 *    order. 0: block i on tile i.
 *  - cluster: C (a power of 2 up to 8) workgroups consecutive along grid
 *    axis 0 run as one cluster; each tile a tensor-copy ring streams that
 *    is the same for all of them (its coordinates do not depend on axis
 *    0's workgroup id: a GEMM's b[N, K] along M) is copied once for the
 *    cluster, each workgroup bringing 1/C of it to every workgroup's
 *    shared memory (TMA multicast), so L2 serves it once instead of C
 *    times. Where it cannot apply it is an error (E0408). 1 or not given:
 *    no clusters.
 *  - early_mma: 1 or not given, a warpgroup kernel issues each mma as soon
 *    as what it reads is computed (its operands' cheap cone moved up with
 *    it), so that it runs on the tensor cores while the waves compute
 *    what precedes its first use, where the thread's registers leave 64
 *    beside the accumulators then live; 1: regardless of the registers;
 *    0 (or not given with pingpong = 1): program order.
 *  - read_ahead: not given, a loop that streams tiles on a warpgroup
 *    kernel loads the global reads it makes each iteration (not staged)
 *    an iteration ahead, within the registers its accumulators leave; 1:
 *    up to 32 a thread regardless; N from 2 to 64: up to N regardless;
 *    0: in the iteration.
 *  - mma_ahead: 1, a loop whose iteration opens with wgmmas that read only
 *    its ring slot and what the loop leaves unchanged (the one-pass
 *    backward's s = k qᵀ and dp = v doᵀ) issues them for the next
 *    iteration right after its own last wgmma, so that they run while the
 *    iteration finishes (the last iteration peeled); 2: after the last
 *    wgmmas' results are staged (fewer registers live beside them). 0 or
 *    not given: off (a remark says where it would apply). */
#define WAVEC_HW_INTS(X)                                                       \
  X(WAVEC_HW_STAGES, 0, "stages", 1, 8)                                        \
  X(WAVEC_HW_WORKGROUPS_PER_SM, 1, "workgroups_per_sm", 1, 32)                 \
  X(WAVEC_HW_COPIES, 2, "copies", 1, 2)                                        \
  X(WAVEC_HW_SPECIALIZE, 3, "specialize", 0, 1)                                \
  X(WAVEC_HW_PERSISTENT, 4, "persistent", 0, 1)                                \
  X(WAVEC_HW_SMS, 5, "sms", 1, 1024)                                           \
  X(WAVEC_HW_GROUP_M, 6, "group_m", 1, 256)                                    \
  X(WAVEC_HW_STORES, 7, "stores", 1, 2)                                        \
  X(WAVEC_HW_PINGPONG, 8, "pingpong", 0, 1)                                    \
  X(WAVEC_HW_OVERLAP, 9, "overlap", 0, 1)                                      \
  X(WAVEC_HW_SUM_PARTS, 10, "sum_parts", 0, 1)                                  \
  X(WAVEC_HW_ADDS, 11, "adds", 1, 2)                                          \
  X(WAVEC_HW_EXCHANGE, 12, "exchange", 0, 1)                                  \
  X(WAVEC_HW_LONGEST_FIRST, 13, "longest_first", 0, 1)                        \
  X(WAVEC_HW_CLUSTER, 14, "cluster", 1, 8)                                     \
  X(WAVEC_HW_EARLY_MMA, 15, "early_mma", 0, 1)                               \
  X(WAVEC_HW_READ_AHEAD, 16, "read_ahead", 0, 64)                            \
  X(WAVEC_HW_MMA_AHEAD, 17, "mma_ahead", 0, 2)

typedef enum wavec_hw_int {
#define X(e, v, name, lo, hi) e = v,
  WAVEC_HW_INTS(X)
#undef X
      WAVEC_HW_INT_COUNT = 0 WAVEC_HW_INTS(WAVEC_ROW_)
} wavec_hw_int;

WAVEC_API wavec_status wavec_hardware_int(wavec_kernel *k, wavec_hw_int which,
                                          wavec_expr n, wavec_loc loc);
WAVEC_API wavec_status wavec_vector_shape(wavec_kernel *k, wavec_sym dim,
                                          wavec_expr n, wavec_loc loc);
/* `defaults { SYM = VALUE }` */
WAVEC_API wavec_status wavec_default_int(wavec_kernel *k, wavec_sym s,
                                         int64_t v, wavec_loc loc);
WAVEC_API wavec_status wavec_default_float(wavec_kernel *k, wavec_sym s,
                                           double v, wavec_loc loc);
/* `defaults { SYM = EXPR }`: an integer expression of sizes and other
 * hyperparameters (`BLOCK_M = 128 + 64 * min(K1 // 80, 1)`), evaluated
 * once they have values (a -D of SYM still wins); since 0.6. */
WAVEC_API wavec_status wavec_default_expr(wavec_kernel *k, wavec_sym s,
                                          wavec_expr e, wavec_loc loc);

/* Mappings: iterators are fresh symbols local to the mapping. Inputs give the
 * memory coordinate of each memory dimension; outputs the register coordinate
 * of each register dimension, in register-dimension order. */
WAVEC_API wavec_mapping wavec_mapping_begin(wavec_kernel *k, const char *name,
                                            wavec_loc loc);
WAVEC_API wavec_sym wavec_mapping_iter(wavec_kernel *k, wavec_mapping m,
                                       const char *name, wavec_loc loc);
WAVEC_API wavec_status wavec_mapping_input(wavec_kernel *k, wavec_mapping m,
                                           wavec_sym dim, wavec_expr e,
                                           wavec_loc loc);
WAVEC_API wavec_status wavec_mapping_output(wavec_kernel *k, wavec_mapping m,
                                            wavec_sym dim, wavec_expr e,
                                            wavec_loc loc);
WAVEC_API wavec_status wavec_mapping_end(wavec_kernel *k, wavec_mapping m,
                                         wavec_loc loc);

/* Values. `ept` (elements per thread) and `mapping` may be 0. */
WAVEC_API wavec_value wavec_scalar(wavec_kernel *k, double v, wavec_loc loc);
WAVEC_API wavec_value wavec_scalar_sym(wavec_kernel *k, wavec_sym s,
                                       wavec_loc loc);
WAVEC_API wavec_value wavec_register(wavec_kernel *k, size_t ndims,
                                     const wavec_sym *dims, wavec_dtype dt,
                                     wavec_value init, wavec_loc loc);
WAVEC_API wavec_value wavec_read(wavec_kernel *k, wavec_value mem,
                                 wavec_expr ept, wavec_mapping mapping,
                                 wavec_loc loc);
/* read(mem, fill = VALUE): elements past the edge of memory (in the tiles of
 * a dimension its tile does not divide, or through a mapping) read as
 * `fill`, a scalar (wavec_scalar or wavec_scalar_sym; 0 means the default,
 * 0.0). */
WAVEC_API wavec_value wavec_read_fill(wavec_kernel *k, wavec_value mem,
                                      wavec_expr ept, wavec_mapping mapping,
                                      wavec_value fill, wavec_loc loc);
WAVEC_API wavec_value wavec_write(wavec_kernel *k, wavec_value v,
                                  wavec_value mem, wavec_expr ept,
                                  wavec_mapping mapping, wavec_loc loc);
/* write(value, mem, reduce = add): mem += value, element by element; the
 * adds of one element are atomic and come in an unspecified order. f32
 * only. A partial sum (an mma or sum whose reduction dim is split over
 * waves or workgroups) is written this way: the parts add up in memory. */
WAVEC_API wavec_value wavec_write_add(wavec_kernel *k, wavec_value v,
                                      wavec_value mem, wavec_expr ept,
                                      wavec_mapping mapping, wavec_loc loc);
WAVEC_API wavec_value wavec_mma(wavec_kernel *k, wavec_value lhs,
                                wavec_value rhs, wavec_value acc,
                                wavec_loc loc);
WAVEC_API wavec_value wavec_unary(wavec_kernel *k, wavec_op op, wavec_value x,
                                  wavec_loc loc);
/* Binary and comparison ops; a scalar or a value whose dims are a subset of
 * the other's is broadcast. */
WAVEC_API wavec_value wavec_binary(wavec_kernel *k, wavec_op op, wavec_value a,
                                   wavec_value b, wavec_loc loc);
WAVEC_API wavec_value wavec_select(wavec_kernel *k, wavec_value cond,
                                   wavec_value a, wavec_value b, wavec_loc loc);
WAVEC_API wavec_value wavec_cast(wavec_kernel *k, wavec_value x, wavec_dtype dt,
                                 wavec_loc loc);
WAVEC_API wavec_value wavec_permute(wavec_kernel *k, wavec_value x,
                                    size_t ndims, const wavec_sym *dims,
                                    wavec_loc loc);
WAVEC_API wavec_value wavec_broadcast(wavec_kernel *k, wavec_value x,
                                      size_t ndims, const wavec_sym *dims,
                                      wavec_loc loc);
/* op is WAVEC_OP_MAX or WAVEC_OP_SUM; acc may be 0. */
WAVEC_API wavec_value wavec_reduce(wavec_kernel *k, wavec_op op, wavec_value x,
                                   wavec_value acc, wavec_sym dim,
                                   wavec_loc loc);
WAVEC_API wavec_value wavec_self_index(wavec_kernel *k, wavec_sym dim,
                                       wavec_dtype dt, wavec_loc loc);

/* iterate(DIM, c0 = init0, ...) { body; yield ... }. Between begin and yield
 * the builder appends to the loop body; wavec_loop_carried() is the value of
 * carried i inside the body, wavec_loop_result() the loop's result i. */
WAVEC_API wavec_loop wavec_loop_begin(wavec_kernel *k, wavec_sym dim, size_t n,
                                      const wavec_value *init, wavec_loc loc);
WAVEC_API wavec_value wavec_loop_carried(wavec_kernel *k, wavec_loop l,
                                         size_t i);
/* iterate(D REL E, ...): walk only the tiles of D holding a coordinate d
 * with d REL e for some e in the workgroup's tile of E (a dimension split
 * over workgroups): under a causal mask, the tiles of keys a block of
 * queries can see (K2 <= M) or the queries a block of keys is seen by
 * (M >= K2). The body still masks the tiles the diagonal crosses. Call
 * right after wavec_loop_begin. */
typedef enum wavec_rel {
  WAVEC_REL_NONE = 0,
  WAVEC_REL_LT = 1,
  WAVEC_REL_LE = 2,
  WAVEC_REL_GT = 3,
  WAVEC_REL_GE = 4
} wavec_rel;
WAVEC_API wavec_status wavec_loop_bound(wavec_kernel *k, wavec_loop l,
                                        wavec_rel rel, wavec_sym dim,
                                        wavec_loc loc);
/* iterate(D REL E + OFF, ...): the bound compares d with e + OFF, an
 * integer expression of sizes and hyperparameters (a causal mask aligned
 * at the bottom right: K2 <= M + (K2 - M)). After wavec_loop_bound. (0.7) */
WAVEC_API wavec_status wavec_loop_bound_offset(wavec_kernel *k, wavec_loop l,
                                               wavec_expr off, wavec_loc loc);
WAVEC_API wavec_status wavec_loop_yield(wavec_kernel *k, wavec_loop l, size_t n,
                                        const wavec_value *next, wavec_loc loc);
WAVEC_API wavec_value wavec_loop_result(wavec_kernel *k, wavec_loop l,
                                        size_t i);

/* A name for dumps and diagnostics (the parser passes the source variable);
 * name NULL leaves the value's name as it is. */
WAVEC_API void wavec_value_name(wavec_kernel *k, wavec_value v,
                                const char *name);

/* ---- front end ----------------------------------------------------------- */
/* Parses `.wave` source text into kernels of ctx. The text is copied;
 * filename may be NULL (messages then name "<input>"). */
WAVEC_API wavec_status wavec_parse(wavec_ctx *ctx, const char *filename,
                                   const char *src, size_t len);
/* The same for the kernel named `kernel` alone (NULL: every kernel): the
 * others are skipped unchecked (their braces matched, or up to the next
 * `kernel NAME (` at the start of a line), so an error in one of them does
 * not stop this one. A file without that kernel parses to none. (0.7) */
WAVEC_API wavec_status wavec_parse_kernel(wavec_ctx *ctx, const char *filename,
                                          const char *src, size_t len,
                                          const char *kernel);

/* ---- compilation --------------------------------------------------------- */
/* The passes. Their values are pinned (a new pass takes the next free
 * number); the order they run in is the pipeline's, wavec_pass_at, never the
 * order of their values. */
typedef enum wavec_pass {
  WAVEC_PASS_CHECK = 0,
  WAVEC_PASS_BIND = 1,
  WAVEC_PASS_CONSTRAINTS = 2,
  WAVEC_PASS_INDEX = 3,
  WAVEC_PASS_BROADCAST = 4,
  WAVEC_PASS_EXPAND = 5,
  WAVEC_PASS_LOWER = 6,
  WAVEC_PASS_WAITS = 7,
  WAVEC_PASS_PROMOTE = 8,
  WAVEC_PASS_PIPELINE = 9,
  WAVEC_PASS_WALKS = 10,
  WAVEC_PASS_MASKSPLIT = 11,
  WAVEC_PASS_SCHEDULE = 12,
  WAVEC_PASS_TURNS = 13,
  WAVEC_PASS_OVERLAP = 14,
  WAVEC_PASS_CONTRACT = 15,
  WAVEC_PASS_RELEASE = 16,
  WAVEC_PASS_BARRIERS = 17,
  WAVEC_PASS_AHEAD = 18,
  WAVEC_PASS_COUNT = 19 /* one more than the largest value */
} wavec_pass;
/* The i-th pass of the pipeline, in the order they run; -1 past the last. */
WAVEC_API int wavec_pass_at(size_t i);
/* The pass's name ("?" for no pass) and its contract in one line ("" for no
 * pass). */
WAVEC_API const char *wavec_pass_name(wavec_pass p);
WAVEC_API const char *wavec_pass_about(wavec_pass p);
WAVEC_API int wavec_pass_lookup(const char *name); /* -1 when unknown */

/* Dump callback: called after each pass whose bit is set in the options with
 * the pass and the printed graph. */
typedef void (*wavec_dump_fn)(void *ud, wavec_pass pass, const char *text,
                              size_t len);

/* Progress callback of wavec_simulate: after each workgroup it ran, the
 * workgroups done so far and their number in all. */
typedef void (*wavec_progress_fn)(void *ud, uint64_t done, uint64_t total);

/* Compile options. `size` is sizeof(wavec_options) as the caller was
 * compiled: the library reads only the fields that fit in it (the others
 * take their defaults, 0), so a program built against an older header keeps
 * working; a larger size from a newer header is taken when the fields this
 * library does not know are all 0. Start from WAVEC_OPTIONS_INIT. */
typedef struct wavec_options {
  size_t size;
  uint32_t print_after; /* bit (1u << pass) */
  wavec_dump_fn dump;   /* called for print_after */
  void *dump_ud;
  int check_only; /* stop after `check` */
  /* The step budget of each wavec_simulate of the kernel: the most
   * instructions its waves may run in all (one step: one instruction of
   * one wave). Past it the run fails (E0614, WAVEC_ERR_RUNTIME) at the
   * innermost loop it was in. 0: WAVEC_DEFAULT_MAX_STEPS. */
  uint64_t max_steps;
  /* Called by each wavec_simulate of the kernel (NULL: never), on the
   * calling thread. The library never prints: a caller that shows progress
   * decides how often (`wavec run` redraws one line of a terminal at most
   * every 100 ms). */
  wavec_progress_fn progress;
  void *progress_ud;
} wavec_options;
#define WAVEC_OPTIONS_INIT                                                     \
  { sizeof(wavec_options), 0, 0, 0, 0, 0, 0, 0 }
/* 2^32: ten times the steps of a 4096^3 GEMM (examples/gemm.wave,
 * 4.3e8), 2,600 times the largest simulation of the tests (1.6e6). A
 * release build runs 1e8 to 4e8 steps a minute: a kernel that would loop
 * for ages stops within about 10 to 40 minutes. */
#define WAVEC_DEFAULT_MAX_STEPS (UINT64_C(1) << 32)

/* Runs the pipeline on kernel k as far as it exists. opt may be NULL (the
 * defaults); WAVEC_ERR_INVALID, with a diagnostic, when opt->size is smaller
 * than the `size` field, or larger than this library's wavec_options with
 * a field it does not know set. */
WAVEC_API wavec_status wavec_compile(wavec_kernel *k, const wavec_options *opt);

/* Per-pass wall time of the last wavec_parse/wavec_compile on ctx, in
 * nanoseconds: index 0 is parsing, 1 + pass for each pass.
 * WAVEC_ERR_INVALID when i is past the last one. */
WAVEC_API size_t wavec_time_count(wavec_ctx *ctx);
WAVEC_API wavec_status wavec_time_get(wavec_ctx *ctx, size_t i,
                                      const char **name, uint64_t *ns);

/* The kernel graph printed after its latest pass (deterministic). Valid until
 * the next call on the context. */
WAVEC_API const char *wavec_kernel_dump(wavec_kernel *k);

/* ---- running ------------------------------------------------------------- */
/* A kernel argument after compilation: shape from the bound sizes. Buffers
 * hold f16 and bf16 as raw 16-bit patterns, f32 as float, i32 as int32_t, i1
 * as one byte. `is_output`: the kernel writes it. */
typedef struct wavec_arg_info {
  const char *name;
  wavec_dtype dtype;
  size_t ndims;
  int64_t shape[WAVEC_MAX_DIMS];
  size_t elems, bytes;
  int is_output;
} wavec_arg_info;
/* The arguments of kernel k; WAVEC_ERR_INVALID when i is past the last. */
WAVEC_API size_t wavec_arg_count(wavec_kernel *k);
/* The shape of argument i for the next runs of the compiled kernel k: its
 * dynamic dimensions (wavec_dynamic) take their sizes from it, the others
 * must be what k was compiled for. One compiled kernel serves every size;
 * wavec_arg_info_get, wavec_launch_dims, wavec_simulate and wavec_gpu_run
 * use the sizes given last. WAVEC_ERR_INVALID, with a diagnostic, for
 * another number of dims, a static dim that differs, or a size that is not
 * positive. */
WAVEC_API wavec_status wavec_arg_shape(wavec_kernel *k, size_t i,
                                       size_t ndims, const int64_t *shape);
/* 1 when dimension d of argument i of the compiled kernel k is dynamic
 * (its size is given at run time), else 0. */
WAVEC_API int wavec_arg_dim_is_dynamic(wavec_kernel *k, size_t i, size_t d);
/* The name of dimension d of argument i of the compiled kernel k when it
 * is dynamic (e.g. "M": arguments that share it share its size), NULL
 * when it is fixed. */
WAVEC_API const char *wavec_arg_dim_name(wavec_kernel *k, size_t i, size_t d);
WAVEC_API wavec_status wavec_arg_info_get(wavec_kernel *k, size_t i,
                                          wavec_arg_info *out);
/* Whether output i's contents before a run are its initial value (keep
 * non-zero): the elements the kernel does not write keep them, and the
 * simulator does not report them unwritten (E0606). Off by default, when
 * an output the kernel only writes must be written whole. Arguments 0 to
 * 63; `wavec run` turns it on for an output given by --arg. */
WAVEC_API wavec_status wavec_arg_keep(wavec_kernel *k, size_t i, int keep);

/* Runs the compiled kernel in the simulator on host buffers args[i] (one per
 * argument, in declaration order). Every thread of every workgroup runs;
 * out-of-bounds accesses, reads of unwritten memory, shared-memory races,
 * conflicting writes, unmatched barriers and outputs not fully written are
 * errors (WAVEC_ERR_RUNTIME) at the source line responsible. */
WAVEC_API wavec_status wavec_simulate(wavec_kernel *k, void *const *args);

/* Performance remarks of the last compile (each "file:line:col: remark: ...",
 * e.g. a layout conversion and the line that caused it). */
WAVEC_API size_t wavec_remark_count(wavec_kernel *k);
WAVEC_API const char *wavec_remark(wavec_kernel *k, size_t i);

/* Testing only: plants a named bug (e.g. "expand-lookup": expansion ignores
 * the coordinate when it looks up an operand's clone) so that tests can show
 * the verifier catches it. WAVEC_ERR_INVALID for an unknown name. */
WAVEC_API wavec_status wavec_test_hook(wavec_ctx *ctx, const char *name);

/* ---- layout view ------------------------------------------------------------
 */
/* Renders which lane holds which element of one operand of an mma type: the
 * tile of role "lhs" (M x K), "rhs" (N x K) or "acc" (M x N; role NULL means
 * "acc"), every cell "lane:elem". The picture is computed from the very
 * layout table the compiler uses, by evaluating it for every lane and
 * element; a layout that is not a bijection onto the tile gives
 * WAVEC_ERR_INTERNAL. n: the N of a wgmma type (F32_64xNx16_*: 8, 16, ...,
 * 256; 0 means 16); for the other types 0 or their fixed N. svg == 0: a text
 * grid (a legend line, a header row of column coordinates, then one line per
 * row); svg != 0: a self-contained SVG document, cells coloured by lane. An
 * operand that the instruction reads from shared memory (the rhs of a wgmma)
 * has no per-lane fragment: every cell shows "shared". *out (valid until the
 * context is freed) is set on success. WAVEC_ERR_INVALID, with a diagnostic
 * naming the valid choices, for an unknown mma type or role or a bad n. */
WAVEC_API wavec_status wavec_layout_render(wavec_ctx *ctx, const char *mma_name,
                                           const char *role, int n, int svg,
                                           const char **out);

/* The same picture for a value of a compiled kernel (after wavec_compile):
 * one wave's tile of the value over its last two dims (the other dims at
 * coordinate 0; a one-dim value is one row), coordinates counted from the
 * wave tile's start, every cell "clone:lane:elem" — clone is the index of
 * the vector tile (expansion clone) in coordinate order. It is computed by
 * evaluating the expanded graph's layouts for every clone, lane and element.
 * A layout may replicate (a reduction result or a broadcast operand: several
 * lanes or elements hold one coordinate): the first holder is shown, the
 * cell is marked "*" and the legend says so. node: a source variable name,
 * naming the last value assigned to it, or "NAME@LINE" for the one assigned
 * on that source line. WAVEC_ERR_INVALID, with a diagnostic listing valid
 * names, for an unknown node or a kernel not compiled; WAVEC_ERR_INTERNAL
 * when the clones overlap or leave a cell empty. */
WAVEC_API wavec_status wavec_layout_render_node(wavec_kernel *k,
                                                const char *node, int svg,
                                                const char **out);

/* ---- NVIDIA back end ------------------------------------------------------
 */
/* PTX for the compiled kernel k (after wavec_compile), for target "sm_80",
 * "sm_89", "sm_90" or "sm_90a": one module (.version 8.0; 8.4 with the fp8
 * mma.sync) with one `.entry` named
 * after the kernel, taking one `.param .u64` per argument in declaration
 * order (device pointers to dense row-major tensors), then one 128-byte
 * tensor map per wavec_tensor_map_info (sm_90a rings), `.reqntid` the block
 * of wavec_launch_dims, and .file/.loc line information pointing at the
 * .wave source. Deterministic: the same kernel and options give the same
 * bytes. *ptx (NUL-terminated; *len its length without the NUL, len may be
 * NULL) stays valid until the context is freed. WAVEC_ERR_INVALID for an
 * unknown target or a kernel not compiled; WAVEC_ERR_UNSUPPORTED, with a
 * diagnostic, for what the target cannot run: AMD MFMA mma types and
 * other 64-lane waves, wgmma (a warpgroup mma) on a target other than
 * sm_90a, the fp8 mma.sync and fp8 conversions before sm_89, arithmetic on
 * i1 values, more workgroups than a launch can have, more threads or
 * shared memory than a block can have. (Tensors of 2^31 elements or more
 * are fine: their offsets are 64-bit.) */
WAVEC_API wavec_status wavec_emit_ptx(wavec_kernel *k, const char *target,
                                      const char **ptx, size_t *len);

/* Launch shape of the compiled kernel: grid and block in threads (x, y, z)
 * and the bytes of shared memory it uses (above 48 KiB: dynamic shared
 * memory, which the launch must pass and allow). Each of grid, block and
 * smem_bytes may be NULL. */
WAVEC_API wavec_status wavec_launch_dims(wavec_kernel *k, uint32_t grid[3],
                                         uint32_t block[3], size_t *smem_bytes);

/* Tensor maps (CUtensorMap) the compiled kernel takes after its argument
 * pointers, one `.param .align 64 .b8 NAME_tmap_I[128]` each, in order: the
 * launcher builds map i with cuTensorMapEncodeTiled over argument `arg`
 * (its dims innermost first, byte strides of a dense row-major tensor),
 * box dims `box` (the argument's dim order, outermost first, as `shape`),
 * element strides 1, no interleave, the swizzle `swizzle` names (its span
 * in bytes: 128, 64 or 32 for CU_TENSOR_MAP_SWIZZLE_128B, _64B, _32B; 0
 * for none; the box's last dim is then that many bytes), L2 promotion
 * 256B, out-of-bounds fill with zeros. (Until 0.5 the field was
 * swizzle_128b, 1 for 128 bytes: a launcher built against 0.4 must be
 * rebuilt.) */
typedef struct wavec_tensor_map_info {
  size_t arg;
  size_t ndims;
  uint32_t box[8];
  int swizzle;
} wavec_tensor_map_info;
WAVEC_API size_t wavec_tensor_map_count(wavec_kernel *k);
WAVEC_API int wavec_tensor_map_info_get(wavec_kernel *k, size_t i,
                                        wavec_tensor_map_info *out);

/* Runs the compiled kernel once on the first CUDA GPU, through the driver
 * API loaded at run time (dlopen "libcuda.so.1"; nothing links against
 * CUDA, so the library works on machines without a GPU). host_args as for
 * wavec_simulate: one host buffer per argument in declaration order; every
 * buffer is copied to the device, the kernel runs (its PTX for the device's
 * architecture, assembled as wavec_gpu_load says), and the arguments the kernel
 * writes are copied back. ms (may be NULL): the kernel's time in
 * milliseconds, by CUDA events around one launch that follows one warm-up
 * launch (the written arguments are restored from host_args in between, so
 * the results are those of one launch). WAVEC_ERR_RUNTIME, with the driver's
 * error and the step that failed, when there is no driver ("no CUDA driver
 * (libcuda.so.1 not found)"), no device, or the JIT, launch or kernel
 * fails. */
WAVEC_API wavec_status wavec_gpu_run(wavec_kernel *k, void *const *host_args,
                                     double *ms);

/* ---- GPU binaries and the disk cache -------------------------------------- */
/* A kernel built for one NVIDIA target, ready to launch without the
 * compiler: its launch shape, its arguments and its machine code (a cubin,
 * the CUDA driver's compilation of the kernel's PTX for the device). It
 * belongs to the context that made it. */
typedef struct wavec_module wavec_module;

#define WAVEC_LOAD_NO_CACHE 1u /* neither read nor write the disk cache */
/* Assemble with the CUDA toolkit's ptxas ($WAVEC_PTXAS, else
 * $CUDA_HOME/bin/ptxas, else /usr/local/cuda/bin/ptxas, else PATH) rather
 * than the driver: needs no GPU (the module launches wherever the cubin
 * runs), the target must be named (not "auto"), and the key holds the
 * ptxas binary's path, size and time in place of the driver's version.
 * Without this flag or WAVEC_LOAD_DRIVER, a load on a GPU assembles with
 * that ptxas too where one is found that the driver's CUDA version covers,
 * of the same major version (`ptxas --version`, asked once a process),
 * else with the driver: the
 * driver's compiler was measured to serialize the wgmmas of kernels ptxas
 * does not, and to give slower code (bench/NOTES.md, v0.5.11). */
#define WAVEC_LOAD_PTXAS 2u
/* Assemble with the driver's compiler even where a ptxas is found. */
#define WAVEC_LOAD_DRIVER 4u

/* The binary of the kernel named `kernel` (NULL: the only kernel) among
 * those parsed into ctx, for target "sm_80", "sm_89", "sm_90", "sm_90a" or
 * "auto" (the PTX target wavec_gpu_run picks for the device), with ctx's
 * definitions and hardware overrides, on the calling thread's current CUDA
 * context (else the first device's primary context, made current).
 * First looked up in the disk cache (folder: wavec_cache_dir), keyed by
 * the source text and file name, the kernel, the definitions, the
 * hardware overrides, wavec's version and build, the target, the driver's
 * version and the device's compute capability; a hit reads one file and
 * compiles nothing. On a miss the kernel is compiled (wavec_compile, if it
 * is not yet), its PTX assembled into a cubin (WAVEC_LOAD_PTXAS says by
 * what), and the binary
 * stored in the cache (written to a temporary file and renamed: safe
 * under concurrent processes; an entry that is corrupt, truncated or of
 * another format is ignored and replaced; a cache that cannot be written
 * is skipped). Kernels made with the builder API have no source to key
 * on and are never cached. Errors as for wavec_compile and wavec_gpu_run. */
WAVEC_API wavec_status wavec_gpu_load(wavec_ctx *ctx, const char *kernel,
                            const char *target, unsigned flags,
                            wavec_module **out);

WAVEC_API const char *wavec_module_kernel(const wavec_module *b);
/* The PTX target it was built for: "sm_80", "sm_89", "sm_90" or "sm_90a". */
WAVEC_API const char *wavec_module_target(const wavec_module *b);
/* 1 when it was read from the disk cache, 0 when it was built. */
WAVEC_API int wavec_module_cached(const wavec_module *b);
/* Grid and block in threads (x, y, z), bytes of shared memory; with
 * run-time sizes, the grid of the sizes given so far (0 along an axis
 * whose size is not given yet). Each of grid, block and smem_bytes may be
 * NULL. */
WAVEC_API void wavec_module_launch_dims(const wavec_module *b, uint32_t grid[3],
                              uint32_t block[3], size_t *smem_bytes);
WAVEC_API size_t wavec_module_arg_count(const wavec_module *b);
/* As wavec_arg_info_get (dynamic dims: the sizes given so far, 0 until
 * then); -1 past the last argument. */
WAVEC_API int wavec_module_arg(const wavec_module *b, size_t i, wavec_arg_info *out);
/* A module with run-time sizes (dynamic dims, wavec_arg_dim_is_dynamic) as
 * wavec_arg_shape for a kernel: the shape of argument i for the next
 * launches. Its dynamic dims give the sizes; the others must be the
 * compiled ones; the shapes given for one launch must agree on each
 * dynamic dim. The grid, the tensor maps and the size parameters of a
 * launch follow from the sizes (a size not given, or not the multiple its
 * dynamic(...) states, fails the launch). One module serves every size,
 * and the disk cache keeps it once. WAVEC_ERR_INVALID, with a diagnostic,
 * for another number of dims, a fixed dim that differs, a size out of
 * range or in conflict with another argument's. A module is not safe to
 * give shapes to and launch from two threads at once. */
WAVEC_API wavec_status wavec_module_arg_shape(wavec_module *b, size_t i,
                                              size_t ndims,
                                              const int64_t *shape);
/* The name of dimension d of argument i of b when it is dynamic (the
 * dimension's, e.g. "M": arguments that share it share its size), NULL
 * when it is fixed. */
WAVEC_API const char *wavec_module_dim_name(const wavec_module *b, size_t i,
                                            size_t d);
/* The cubin. */
WAVEC_API const void *wavec_module_code(const wavec_module *b, size_t *len);

/* Launches the binary asynchronously on `stream` (a CUstream; NULL: the
 * default stream) of the calling thread's current CUDA context (else the
 * context wavec_gpu_load used), loading its module into that context on
 * the first launch there. dev_args: one device pointer per argument, in
 * declaration order, to dense row-major tensors of the argument's shape
 * and type (wavec_module_arg); nothing is checked on the device side.
 * A kernel with tensor maps (wavec_tensor_map_info) gets them built over
 * these pointers at every launch and passed after them; one with run-time
 * sizes gets them, its grid and its shapes from wavec_module_arg_shape.
 * WAVEC_ERR_RUNTIME with the driver's error when loading or launching
 * fails. */
WAVEC_API wavec_status wavec_module_launch(wavec_module *b, void *stream,
                                 const uint64_t *dev_args);

/* Ahead of time: the compiled kernel k as C source for target ("sm_80",
 * "sm_89", "sm_90", "sm_90a"): *c_src one C file holding the kernel's PTX, its cubin
 * when ptxas is found (assembled through the disk cache; flags as for
 * wavec_gpu_load, WAVEC_LOAD_PTXAS implied; *with_cubin, which may be
 * NULL, says whether), and a launcher per kernel NAME (the PTX entry
 * name): `wavec_status NAME_launch(CUstream, CUdeviceptr ARG, ...)` taking
 * one device pointer per argument in declaration order and, for a kernel
 * with run-time sizes, a `uint32_t DIM` per dynamic dim after them (0, or
 * not the multiple dynamic(...) states: WAVEC_ERR_INVALID), which loads
 * the module
 * into the current context once (the cubin where it runs, else the PTX
 * through the driver) and launches with the kernel's grid (computed from
 * the run-time sizes), block and shared memory;
 * `NAME_load()` to load without launching, `NAME_cu_result()` the driver's
 * result of the thread's last failure. The parameters are named as the
 * kernel names them, except a name C could confuse with another: one of a
 * namespace of the headers (cuda.h's CU..., cuX..., stdint.h's, _X,
 * wavec.h's) gets "wv_" put before it, and '_' is appended while it is a
 * C or C++ keyword, `stream`, a local or static of the launcher, a macro
 * of the headers or an earlier parameter's name (`f_`, `int_`,
 * `wv_CUdeviceptr`). *h_src: the header declaring them,
 * which the C file includes as "header_name". The C file compiles with
 * cuda.h and links with -lcuda alone. Both stay valid until the context is
 * freed. */
WAVEC_API wavec_status wavec_emit_c(wavec_kernel *k, const char *target, unsigned flags,
                          const char *header_name, const char **c_src,
                          const char **h_src, int *with_cubin);

/* The disk cache's folder: $WAVEC_CACHE_DIR, else $XDG_CACHE_HOME/wavec,
 * else $HOME/.cache/wavec; NULL when none can be named. Valid until ctx is
 * freed. */
WAVEC_API const char *wavec_cache_dir(wavec_ctx *ctx);

typedef struct wavec_cache_entry {
  const char *file;   /* its path */
  uint64_t bytes;     /* its size */
  int valid;          /* 0: corrupt, truncated or of another format */
  const char *kernel; /* the rest NULL when not valid */
  const char *target;
  const char *desc;   /* source file, kernel, definitions, target, ... */
} wavec_cache_entry;

/* The entries of the cache folder, sorted by file name; *n = 0 when the
 * folder does not exist. Valid until the context is freed. */
WAVEC_API wavec_status wavec_cache_list(wavec_ctx *ctx, const wavec_cache_entry **out,
                              size_t *n);
/* Removes every entry, the autotuner's choices (python/) and every
 * temporary file a writer left behind;
 * *removed (may be NULL): how many files. WAVEC_ERR_RUNTIME when one could
 * not be removed. */
WAVEC_API wavec_status wavec_cache_clear(wavec_ctx *ctx, size_t *removed);

#ifdef __cplusplus
}
#endif
#endif
