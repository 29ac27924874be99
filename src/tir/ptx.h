/* The PTX printer's state and helpers, shared by ptx.c (the module, its
 * analyses and most instructions) and ptx_mma.c (mma.sync and wgmma: the
 * fragments' packing, the warpgroup fences, waits and commits). Private to
 * src/tir. */
#ifndef WV_PTX_H
#define WV_PTX_H

#include <stdio.h>

#include "target/target.h"
#include "tir/tir.h"

/* Register classes of the PTX program. */
enum { C_PRED, C_B32, C_B16, C_F32, C_B64, C_COUNT };
static const char *const reg_prefix[C_COUNT] = {"%p", "%r", "%h", "%f", "%x"};
static const char *const tmp_prefix[C_COUNT] = {"%tp", "%tr", "%th", "%tf",
                                                "%rd"};
/* (an 8-bit float in the low byte of a .b16, its high byte 0; an i8
 * sign-extended in a .b32) */
static const int ty_class[TY_COUNT] = {
    [TY_PRED] = C_PRED, [TY_I32] = C_B32,  [TY_F16] = C_B16,
    [TY_BF16] = C_B16,  [TY_F32] = C_F32,  [TY_E4M3] = C_B16,
    [TY_E5M2] = C_B16,  [TY_I8] = C_B32,  [TY_I64] = C_B64};

/* Names are passed by value so that no buffer is overwritten under them. */
typedef struct nm {
  char s[24];
} nm;

typedef struct px {
  wavec_ctx *ctx;
  const tir_prog *p;
  const wv_target *t;
  wv_buf body;
  const tir_instr *in;           /* being printed, for diagnostics */
  wavec_loc kloc;                /* the kernel's, for program-wide ones */
  uint32_t ntmp[C_COUNT], maxtmp[C_COUNT];
  uint32_t maxreg[C_COUNT];      /* highest TIR register number per class */
  bool need_hz;                  /* %hz: a zero .b16 (bf16 widening) */
  int isa;                       /* the PTX ISA version x10 an instruction
                                  * needs (0: the default) */
  bool fenced;                   /* wgmma.fence since the accumulators
                                  * were last touched by anything else */
  uint32_t nwa;                  /* %wa registers: packed wgmma lhs */
  uint32_t nwd;                  /* %wd registers: wgmma descriptor bases */
  struct {                       /* the bases of this straight-line run */
    uint32_t root, wd;           /* shared offset register, its %wd */
    int64_t lbo, W;              /* leading byte offset, swizzle bytes */
  } wdbase[8];
  uint32_t nwdbase;
  /* analyses */
  bool *commits;                 /* by instruction: a wgmma wait that closes
                                  * a group (open_groups) */
  uint32_t *wa;                  /* by instruction: 1 + the first %wa of a
                                  * wgmma's packed lhs, 0 before packing */
  uint8_t *isconst, *nonneg;     /* by register */
  uint8_t *wgreg;                /* by register: in some wgmma's list */
  uint8_t *zero;                 /* by register: holds +0.0 here, written
                                  * last by a constant (ptx_zero_rule) */
  uint32_t *def;                 /* by register: its one definition's index
                                  * + 1, 0 when it has none or several */
  int64_t *cval;
  bool *argread, *argwritten;    /* by argument */
  /* line info */
  VEC(const char *) files;
  const char *lfile;
  uint32_t lline, lcol;
} px;

/* ---- output helpers -------------------------------------------------------- */
static inline void ins(px *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline void ins(px *x, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  wv_buf_puts(&x->body, "\t");
  wv_buf_vprintf(&x->body, fmt, ap);
  wv_buf_puts(&x->body, ";\n");
  va_end(ap);
}

static inline tir_ty ty(px *x, uint32_t r) { return x->p->regs.v[r]; }

static inline nm R(px *x, uint32_t r) {
  nm n;
  snprintf(n.s, sizeof n.s, "%s%u", reg_prefix[ty_class[ty(x, r)]], r);
  return n;
}

static inline nm T(px *x, int cls) {
  nm n;
  uint32_t i = x->ntmp[cls]++;
  if (x->ntmp[cls] > x->maxtmp[cls])
    x->maxtmp[cls] = x->ntmp[cls];
  snprintf(n.s, sizeof n.s, "%s%u", tmp_prefix[cls], i);
  return n;
}

static inline _Noreturn void unsupported(px *x, const char *what) {
  wavec_loc loc = x->in ? x->in->loc : x->kloc;
  wv_fail(x->ctx, D_UNSUPPORTED, loc, "PTX for %s: %s", x->t->name, what);
}

/* ptx.c: the shared address of byte register `byte` (a .b32 temporary). */
nm ptx_shared_addr(px *x, uint32_t byte);

/* ptx_mma.c */
/* Elements regs[0..) packed into the .b32 register `into`, low first: two
 * of 16 bits or four of 8 (of type t). */
void ptx_pack32(px *x, const uint32_t *regs, tir_ty t, const char *into);
/* The wgmma analyses (before printing): which waits commit a group, the
 * registers wgmmas take. */
void ptx_wgmma_analyse(px *x);
/* Before instruction `in` is printed: whether the next wgmma needs a
 * wgmma.fence. */
void ptx_wgmma_fence_rule(px *x, const tir_instr *in);
void ptx_zero_rule(px *x, const tir_instr *in);
void ptx_emit_wgcommit(px *x, const tir_instr *in);
void ptx_emit_mma(px *x, const tir_instr *in);
void ptx_emit_wgmma(px *x, const tir_instr *in);
void ptx_emit_wgwait(px *x, const tir_instr *in);

#endif
