/* The graph IR: nodes of whole-tensor ops with symbolic types.
 *
 * Invariants (checked by wv_verify):
 *  - Nodes live in a graph's array and refer to each other by id; id 0 is
 *    "none". A node's operands are defined earlier in the same block or in an
 *    enclosing block (the graph is in SSA order; blocks nest by iterate).
 *  - A register value's type is an ordered set of distinct dimension symbols
 *    and a dtype; a memory argument's type is its memory's dims and dtype.
 *  - Expansion makes a new graph; a graph never points into another.
 */
#ifndef WV_IR_H
#define WV_IR_H

#include "expr/expr.h"
#include "support/base.h"

#define WV_MAX_DIMS WAVEC_MAX_DIMS

typedef struct wv_type {
  wavec_dtype dt;
  uint8_t n;
  wavec_sym dims[WV_MAX_DIMS];
} wv_type;

/* A graph op: a wavec_op of the API (wavec.h WAVEC_OPS, with its number),
 * or one only the passes make, numbered after them, which the API never
 * takes or returns. */
typedef uint16_t wv_op;
enum {
  WV_OP_CONVERT = WAVEC_OP_COUNT, /* a layout conversion (broadcast pass) */
  WV_OP_COUNT
};

/* Op properties beyond the public X-macro (class, printed name). */
typedef struct wv_opinfo {
  const char *name;
  char cls; /* 'U', 'B', 'C', 'R', 'O' as in WAVEC_OPS */
} wv_opinfo;
extern const wv_opinfo wv_ops[WV_OP_COUNT];

typedef struct wv_dtinfo {
  const char *name;
  int bits;
  bool is_float;
} wv_dtinfo;
extern const wv_dtinfo wv_dtypes[WAVEC_DTYPE_COUNT];
int wv_dtype_lookup(const char *name, size_t n); /* -1 if unknown */
extern const char *const wv_mma_names[WAVEC_MMA_COUNT];
int wv_mma_lookup(const char *name, size_t n); /* -1 if unknown */

typedef struct wv_node {
  wv_op op;
  uint32_t block;     /* the block that holds it */
  wavec_loc loc;
  const char *name;   /* source variable or argument name; may be NULL */
  wv_type type;       /* result type (a WRITE / YIELD has none: n = 0) */
  uint32_t nops;
  uint32_t *ops;      /* operand node ids */
  /* attributes, by op */
  double fval;        /* SCALAR literal */
  wavec_sym sym;      /* SCALAR_SYM value, MAX/SUM and SELF_INDEX dim,
                         ITERATE dim */
  ex_t ept;           /* READ/WRITE elements_per_thread (0: inferred) */
  uint32_t mapping;   /* READ/WRITE mapping id (0: identity) */
  uint32_t mem;       /* READ/WRITE: the ARG node */
  uint32_t index;     /* ARG position, CARRIED/RESULT position */
  uint32_t loop;      /* CARRIED/RESULT/YIELD: the ITERATE node */
  uint32_t body;      /* ITERATE: its body block */
  unsigned flags;     /* ARG: WAVEC_ARG_SHARED; WRITE: WV_WRITE_ADD */
  wavec_rel rel;      /* ITERATE: sym REL rel_dim (+ rel_off) bounds the walk */
  wavec_sym rel_dim;
  wavec_loc rel_loc;
  ex_t rel_off;       /* ITERATE: the bound's offset, an integer expression
                         of sizes (0: none) */
} wv_node;

/* WRITE flags: write(..., reduce = add) adds the value into memory (each
 * element's adds are atomic; their order is unspecified). */
#define WV_WRITE_ADD 1u

typedef struct wv_block {
  VEC(uint32_t) nodes; /* in order */
  uint32_t owner;      /* the ITERATE node, 0 for the top block */
} wv_block;

typedef struct wv_graph {
  VEC(wv_node) nodes;   /* id 0 unused */
  VEC(wv_block) blocks; /* block 0 is the kernel body */
} wv_graph;

typedef enum wv_cons_kind { WV_WORKGROUP, WV_WAVE, WV_TILING } wv_cons_kind;

typedef struct wv_constraint {
  wv_cons_kind kind;
  wavec_sym dim;
  ex_t tile;
  int axis; /* WORKGROUP */
  wavec_loc loc;
  wavec_loc tile_loc; /* where its tile is written (the parser's), or loc */
} wv_constraint;

typedef struct wv_dimval {
  wavec_sym dim;
  ex_t e;
  wavec_loc loc;
} wv_dimval;

typedef VEC(wv_dimval) wv_dimvals;

typedef struct wv_mapping {
  const char *name;
  wavec_loc loc;
  VEC(wavec_sym) iters;
  wv_dimvals inputs;  /* memory dim -> coordinate */
  wv_dimvals outputs; /* register dim -> coordinate; order = dims */
  bool closed;
} wv_mapping;

typedef struct wv_default {
  wavec_sym sym;
  bool is_float;
  int64_t i;
  double f;
  ex_t e; /* an integer expression of other symbols (0: the literal i or f),
             evaluated by pass bind once they have values */
  wavec_loc loc;
} wv_default;

/* A dimension whose size is known only at launch (wavec_dynamic). */
typedef struct wv_dynamic {
  wavec_sym dim;
  ex_t multiple; /* every size is a multiple of it; 0: none stated */
  wavec_loc loc;
} wv_dynamic;

/* An exact division a / b, checked when symbols are bound. */
typedef struct wv_exactdiv {
  ex_t a, b;
  wavec_loc loc;
} wv_exactdiv;

/* The integer hardware entries (WAVEC_HW_INTS): name and range. */
typedef struct wv_hwint_info {
  const char *name;
  int64_t lo, hi;
} wv_hwint_info;
extern const wv_hwint_info wv_hwints[WAVEC_HW_INT_COUNT];
/* How `iterate(D REL E)` spells each relation. */
extern const char *const wv_rel_names[WAVEC_REL_GE + 1];

typedef struct wv_hardware {
  ex_t threads_per_wave; /* 0: from the target */
  wavec_loc threads_loc;
  int mma;               /* wavec_mma_kind or WAVEC_MMA_NONE */
  wavec_loc mma_loc;
  ex_t ints[WAVEC_HW_INT_COUNT]; /* 0: the compiler picks */
  wavec_loc ints_loc[WAVEC_HW_INT_COUNT];
  wv_dimvals vector_shapes;
} wv_hardware;

/* Values of the symbols once bound (pass `bind`). */
typedef struct wv_binding {
  uint32_t n;      /* entries, indexed by wavec_sym */
  int64_t *ival;
  double *fval;
  bool *known;
  bool *is_float;
  /* dynamic dimensions (wv_dynamic): not known; ival holds the size a
   * definition gives (0: none), the default at run time; multiple[] what
   * every size is a multiple of (1: nothing stated) */
  bool *dynamic;
  int64_t *multiple;
} wv_binding;

struct wv_kernel {
  wavec_ctx *ctx;
  const char *name;
  wavec_loc loc;
  wv_graph *g;
  VEC(uint32_t) args; /* ARG node ids, in declaration order */
  VEC(wv_constraint) constraints;
  wv_hardware hw;
  VEC(wv_default) defaults;
  wavec_loc *dim_loc;  /* by symbol: first written in a type (wavec_dim_loc) */
  uint32_t ndim_loc;
  VEC(wv_mapping) mappings; /* id = index + 1 */
  VEC(wv_exactdiv) exactdivs;
  VEC(wv_dynamic) dynamics;
  /* builder state */
  VEC(uint32_t) block_stack; /* innermost last */
  bool ended;
  /* after bind */
  wv_binding bind;
  /* analyses (side tables, src/passes/dist.h) */
  struct wv_dist *dist;   /* after constraints */
  struct wv_index *index; /* after index; replaced by broadcast and expand */
  VEC(const char *) remarks;
  struct lw *lw;          /* from promote to lower: the lowering's state */
  int64_t stages_cap;     /* promote's deepest ring of its own choice, 0:
                             none (set where a deeper one did not fit) */
  struct tir_prog *tir;   /* after lower */
  int64_t *run_size;      /* by tir sizes index: the run-time sizes (0:
                             not given yet), set by wavec_arg_shape */
  uint64_t arg_keep;      /* bit i: output i's contents before a run are
                             its initial value (wavec_arg_keep) */
  uint64_t *run_from;     /* by tir sizes index: the arguments (bit i:
                             argument i < 64) whose shapes gave it since
                             the last run */
  uint64_t max_steps;     /* wavec_simulate's budget (wavec_options) */
  wavec_progress_fn progress; /* and its progress callback, or NULL */
  void *progress_ud;
  wv_buf dump;
  /* the last pass's printer, when its dump is not made yet */
  void (*dump_due)(wv_kernel *k, wv_buf *b);
};
/* The public handle is the internal kernel. */
struct wavec_kernel {
  wv_kernel k;
};

static inline wv_node *wv_get(wv_graph *g, uint32_t id) { return &g->nodes.v[id]; }

wv_graph *wv_graph_new(wavec_ctx *ctx);
/* Appends a node to block `block` and returns its id. */
uint32_t wv_graph_add(wavec_ctx *ctx, wv_graph *g, uint32_t block,
                      const wv_node *proto);
uint32_t wv_graph_add_block(wavec_ctx *ctx, wv_graph *g, uint32_t owner);
/* Gives back the arrays of a graph a pass has replaced (wv_release);
 * nothing may use g afterwards. */
void wv_graph_release(wavec_ctx *ctx, wv_graph *g);

bool wv_type_has(const wv_type *t, wavec_sym d);
bool wv_type_eq(const wv_type *a, const wv_type *b);
bool wv_dims_subset(const wv_type *small, const wv_type *big);
/* "[B, M, K2] f32" */
void wv_type_print(wavec_ctx *ctx, wv_buf *b, const wv_type *t);
/* A value as messages name it: "'name'", or "the OP at line N" for one
 * without a name (in ctx's arena). */
const char *wv_node_what(wavec_ctx *ctx, const wv_node *n);
/* The dynamic(...) constraint of dim d, or NULL (a static dim). */
const wv_dynamic *wv_dynamic_of(const wv_kernel *k, wavec_sym d);
/* Starts a remark at loc in b ("file:line:col: remark: ", which the
 * caller continues); wv_remark_end adds it to k's remarks. */
void wv_remark_start(wv_kernel *k, wavec_loc loc, wv_buf *b);
void wv_remark_end(wv_kernel *k, wv_buf *b);

/* The largest tensor, in bytes: every offset into one and the sums the
 * index code forms from offsets and tile sizes stay within int64. */
#define WV_MAX_TENSOR_BYTES (INT64_C(1) << 62)
/* The elements of a memory argument (an ARG node) under k->bind, and its
 * bytes (bytes may be NULL): every size product of the compiler is formed
 * here. Fails (D_TOO_LARGE) at the argument when the bytes would pass
 * WV_MAX_TENSOR_BYTES; the pass `bind` calls it for every argument first,
 * so later callers cannot fail. */
int64_t wv_tensor_elems(wv_kernel *k, const wv_node *arg, int64_t *bytes);

/* Deterministic dump of the kernel (header, constraints, graph). */
void wv_print_kernel(wv_kernel *k, wv_buf *b);
/* Structural checks; on failure records D_INTERNAL naming the node and
 * returns its status (an invariant broke: a compiler bug, not a user one). */
wavec_status wv_verify(wv_kernel *k, const char *after_pass);

#endif
