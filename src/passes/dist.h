/* The distribution: how a kernel's dimensions are spread over workgroups,
 * waves, loop iterations and lanes (pass `constraints`), and the layouts of
 * values (pass `index`). Both are side tables of the kernel.
 *
 * Index model. A value of type [D1..Dn] is held by every wave as a tile:
 * along dimension D the wave covers `span[D]` consecutive coordinates starting
 * at `base[D]` (an expression in $WGa, $Ta and the loop counters $ARGD). A
 * layout splits that tile into vector tiles of `v[D]` coordinates, one per
 * expansion coordinate c[D] in [0, span/v), and says where each of the
 * `nelem` elements a lane holds lies inside a vector tile: frag[D] is an
 * expression in the lane ($T0) and the element number $E. Element e of lane
 * l of clone c has coordinate base[D] + c[D]*v[D] + frag[D](l, e).
 *
 * Ragged dimensions. A workgroup or loop tile that does not divide its
 * dimension makes the dimension ragged: ceil(size / tile) tiles, the last
 * running past the edge. Coordinates past it are padding: reads give the
 * read's fill (0 by default), writes drop them, and reductions (sum, max
 * and an mma's reduction dim) take them as their identity, so they never
 * reach a result. Divisible dimensions are not ragged and get no guard. */
#ifndef WV_DIST_H
#define WV_DIST_H

#include "ir/ir.h"
#include "target/target.h"

typedef struct wv_diminfo {
  bool used;        /* some tensor has this dim */
  int64_t size;     /* bound value */
  int wg_axis;      /* -1: not split over workgroups */
  int64_t wg_tile;
  int64_t wave_tile;
  int64_t tile;     /* tiling tile; 0 if not tiled */
  int64_t tiles;    /* workgroups (split dims) or loop trips (tiled ones):
                       ceil(size / tile) */
  bool ragged;      /* its tile does not divide it: the last tile runs
                       past the edge, and accesses along it are guarded */
  bool dynamic;     /* known only at launch (wv_dynamic): size and tiles
                       are -1; ragged unless its tile divides multiple */
  int64_t multiple; /* every size is a multiple of it (1: none stated) */
  int64_t most;     /* dynamic: the largest size a launch may give
                       (lw_plan: no tensor past 2^62 elements) */
  int64_t span;     /* the extent one wave covers at once */
  const char *pad;  /* held whole and padded up to span: why (constraints.c;
                       for remarks), else NULL */
  int64_t vshape;   /* hardware vector_shapes entry; -1 unset */
  ex_t base;        /* first coordinate of the wave's tile */
  wavec_sym loopvar; /* $ARGD for tiled dims */
} wv_diminfo;

typedef struct wv_dist {
  int lanes;                /* threads per wave */
  int mma;                  /* wavec_mma_kind or WAVEC_MMA_NONE */
  int64_t hw[WAVEC_HW_INT_COUNT]; /* integer hardware entries; 0: unset */
  int64_t waves[3];         /* waves per block along each grid axis */
  int64_t grid[3];          /* workgroups along each grid axis; -1: the
                               dynamic dim grid_dim[a] sets it at launch */
  wavec_sym grid_dim[3];    /* the dim split along each axis, or 0 */
  int64_t block[3];         /* threads per block along each axis */
  uint32_t nsyms;
  wv_diminfo *dim;          /* by wavec_sym */
  wavec_sym T[3], WG[3], E; /* $T0.., $WG0.., $E */
  ex_t lane;                /* $T0 mod lanes */
} wv_dist;

typedef struct wv_ldim {
  wavec_sym dim;
  int64_t v;  /* vector tile extent */
  ex_t frag;  /* coordinate within the vector tile, in the lane and $E */
} wv_ldim;

typedef struct wv_layout {
  uint32_t nelem;
  uint8_t n;
  wv_ldim d[WV_MAX_DIMS];
} wv_layout;

/* Per node of the current graph: its layout (NULL for memory, writes,
 * scalars and other value-less nodes). After expansion also its expansion
 * coordinate along each of its dims and the old node it came from. */
typedef struct wv_nodeinfo {
  const wv_layout *layout;
  uint32_t origin;            /* expanded graph: the node it clones */
  int32_t coord[WV_MAX_DIMS]; /* expanded graph: by position in its type */
  int32_t link;               /* expanded graph: chain position (mma, reduce) */
} wv_nodeinfo;

typedef struct wv_index {
  uint32_t n;
  wv_nodeinfo *info; /* by node id */
  bool expanded;
} wv_index;

wv_dist *wv_kernel_dist(wv_kernel *k);
wv_index *wv_kernel_index(wv_kernel *k);
wv_index *wv_index_new(wv_kernel *k, uint32_t nnodes);

/* Who holds parts of reduction n's result (an mma, sum or max; 0 for any
 * other node): WV_PARTS_WAVES where the waves of a workgroup do (an mma
 * over a dim they split; a sum or max is reduced across them), and
 * WV_PARTS_GROUPS where workgroups do (its dim split over workgroups). */
enum { WV_PARTS_WAVES = 1, WV_PARTS_GROUPS = 2 };
unsigned wv_partial(const wv_dist *d, const wv_node *n);
/* A thread's wave coordinate along grid axis a: floor($T0/lanes), $T1 or
 * $T2. */
ex_t wv_wave_coord(wavec_ctx *ctx, const wv_dist *d, int a);

/* The layout role r of mma node `mma_id` requires (its result: WV_ACC). */
const wv_layout *wv_mma_role_layout(wv_kernel *k, uint32_t mma_id, wv_role r);
/* Why the tile copies cannot bring read `rd`'s rows to shared memory for
 * an mma over K, or NULL where they can: 8-bit operands are read K-major
 * only, and the rows in memory are a multiple of 4 bytes, the narrowest
 * asynchronous copy (STAGE_VEC_MIN of tir/lower.h; every size of them,
 * where it is given at run time). A wgmma's lhs read that cannot is
 * loaded into registers instead (promote.c says why). */
const char *wv_rows_uncopyable(wv_kernel *k, const wv_node *rd, wavec_sym K);

/* The layout user `uid` requires of operand i (NULL: any). */
const wv_layout *wv_required_layout(wv_kernel *k, const wv_index *ix,
                                    uint32_t uid, uint32_t i);
/* Invariant checks of the index (see index.c). */
wavec_status wv_verify_index(wv_kernel *k, bool resolved);

/* Layout helpers. */
bool wv_layout_eq(const wv_layout *a, const wv_layout *b);
/* The entry of dim d, or NULL. */
const wv_ldim *wv_layout_dim(const wv_layout *l, wavec_sym d);
/* l restricted to the dims of t (every dim of t must be in l). */
wv_layout *wv_layout_project(wavec_ctx *ctx, const wv_layout *l,
                             const wv_type *t);
/* The index of one dimension: base + c*v + frag. */
ex_t wv_index_expr(wv_kernel *k, wavec_sym dim, const wv_layout *l,
                   int64_t coord);
/* Prints "start : size : stride" when the index is affine in $E, else the
 * expression. */
void wv_index_print(wv_kernel *k, wv_buf *b, ex_t e, uint32_t nelem);

#endif
