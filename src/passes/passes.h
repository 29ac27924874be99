/* The passes, in pipeline order. Each takes a kernel, transforms or checks
 * it, and returns a status (diagnostics recorded in the context). The
 * pipeline (compile.c) runs the verifier after each. */
#ifndef WV_PASSES_H
#define WV_PASSES_H
#include "ir/ir.h"

/* require: built graph. Checks what needs the whole kernel: constraint dims
 * exist, every iterate has its tiling and every tiling its iterate, mma
 * operand types fit the hardware mma. */
wavec_status wv_pass_check(wv_kernel *k);
/* bind.c: the rules on the source's values (tiles positive, a wave tile
 * dividing its workgroup's, hardware entries in range, ...): on every
 * value (bind), or with lit on those the source writes as constants
 * (check, before any -D is bound). */
void wv_value_rules(wv_kernel *k, bool lit);
/* require: check. Gives every symbol its value (-D over defaults), evaluates
 * tiles, exact divisions and sizes; fills k->bind. */
wavec_status wv_pass_bind(wv_kernel *k);

/* require: bind. Derives the distribution (dist.h). */
wavec_status wv_pass_constraints(wv_kernel *k);
/* require: constraints. A layout for every value node (dist.h). */
wavec_status wv_pass_index(wv_kernel *k);
/* require: index. Explicit broadcasts and layout conversions; rebuilds the
 * graph. */
wavec_status wv_pass_broadcast(wv_kernel *k);
/* require: broadcast. One node per vector tile; rebuilds the graph. */
wavec_status wv_pass_expand(wv_kernel *k);

#endif
