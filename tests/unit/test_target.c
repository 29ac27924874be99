/* Targets and mma fragment layouts: every layout is a bijection onto its
 * tile, the vendors' documented facts hold (written here in the documents'
 * own piecewise form, independently of the table's bit-field form), the
 * accumulator-as-operand register reuse holds, and the layout view renders
 * what the table says. */
#include "check.h"

#include <string.h>

#include "support/base.h"
#include "target/target.h"

/* The layout of one role, evaluated for every lane and element:
 * at[(lane*elems + elem)*2 + c] is coordinate c. */
typedef struct tab {
  int lanes, elems, rows, cols;
  int64_t *at;
} tab;

static bool eval_tab(wavec_ctx *ctx, wavec_mma_kind k, wv_role r, int n,
                     tab *t) {
  WV_GUARD(ctx, false);
  const wv_mma_info *mi = wv_mma_info_get(k);
  int shape[2];
  wv_mma_role_shape(k, r, n, shape);
  t->lanes = mi->lanes;
  t->elems = wv_mma_elems(k, r, n);
  t->rows = shape[0];
  t->cols = shape[1];
  wavec_sym ls = wavec_symbol(ctx, "lane"), es = wavec_symbol(ctx, "elem");
  ex_t coord[2];
  wv_mma_layout(ctx, k, r, n, ex_sym(ctx, ls), ex_sym(ctx, es), coord);
  uint32_t nv = ctx->sym_names.n;
  int64_t *vals = wv_alloc(ctx, nv * sizeof *vals);
  t->at =
      wv_alloc(ctx, (size_t)t->lanes * (size_t)t->elems * 2 * sizeof *t->at);
  bool ok = true;
  for (int l = 0; l < t->lanes; l++) {
    for (int e = 0; e < t->elems; e++) {
      vals[ls] = l;
      vals[es] = e;
      for (int c = 0; c < 2; c++)
        ok &= ex_eval(ctx, coord[c], vals, NULL, nv,
                      &t->at[(l * t->elems + e) * 2 + c]);
    }
  }
  WV_UNGUARD(ctx);
  return ok;
}

static int64_t at(const tab *t, int lane, int elem, int c) {
  return t->at[(lane * t->elems + elem) * 2 + c];
}

static const char *const mma_names[WAVEC_MMA_COUNT] = {
#define X(e, v, name) [e] = name,
    WAVEC_MMAS(X)
#undef X
};

static bool is_wgmma(wavec_mma_kind k) {
  return wv_mma_info_get(k)->n == 0;
}

/* ---- the table -------------------------------------------------------------
 */

static void test_mma_table(void) {
  for (int k = 0; k < WAVEC_MMA_COUNT; k++) {
    const wv_mma_info *mi = wv_mma_info_get((wavec_mma_kind)k);
    CHECKF(mi && mi->name && strcmp(mi->name, mma_names[k]) == 0,
           "mma %d has no row named %s", k, mma_names[k]);
    if (!mi)
      continue;
    CHECK(mi->lanes == 32 || mi->lanes == 64 || mi->lanes == 128);
    CHECK(mi->m > 0 && mi->k > 0 && mi->n >= 0);
    /* the name says the types: ACC_MxNxK_INPUT */
    const char *in = strrchr(mi->name, '_') + 1;
    wavec_dtype want = !strcmp(in, "BF16")     ? WAVEC_BF16
                       : !strcmp(in, "F8E4M3") ? WAVEC_F8E4M3
                       : !strcmp(in, "F8E5M2") ? WAVEC_F8E5M2
                       : !strcmp(in, "S8")     ? WAVEC_I8
                                               : WAVEC_F16;
    CHECKF(mi->in == want, "%s: input type", mi->name);
    CHECK(mi->acc == (mi->name[0] == 'S' ? WAVEC_I32 : WAVEC_F32));
    bool nv = !strcmp(mi->vendor, "nvidia"),
         f8 = want == WAVEC_F8E4M3 || want == WAVEC_F8E5M2;
    /* 8-bit operands: K of 32 (32 bytes of a row, as K = 16 of 16 bits) */
    if (f8 || want == WAVEC_I8)
      CHECK(mi->k == 32 && nv);
    CHECK(mi->instr && mi->vendor);
    CHECK(strcmp(mi->vendor, mi->lanes == 64 ? "amd" : "nvidia") == 0);
    /* the least GPU: mma.sync sm_80 (fp8 sm_89, PTX ISA 8.4), wgmma
     * sm_90 (with wgmma: sm_90a) */
    CHECKF(mi->sm == (!nv ? 0 : mi->lanes == 128 ? 90 : f8 ? 89 : 80),
           "%s: sm %d", mi->name, mi->sm);
    CHECKF(mi->ptx_isa == (!nv ? 0 : mi->lanes == 128 ? 80 : f8 ? 84 : 70),
           "%s: PTX ISA %d", mi->name, mi->ptx_isa);
  }
  CHECK(wv_mma_info_get(WAVEC_MMA_NONE) == NULL);
  CHECK(wv_mma_info_get(WAVEC_MMA_COUNT) == NULL);
  CHECK(strcmp(wv_role_names[WV_LHS], "lhs") == 0);
  CHECK(strcmp(wv_role_names[WV_RHS], "rhs") == 0);
  CHECK(strcmp(wv_role_names[WV_ACC], "acc") == 0);
  /* wgmma N: 8, 16, ..., 256 (PTX ISA) */
  int nvalid = 0;
  for (int n = -8; n <= 300; n++)
    nvalid += wv_mma_n_valid(WAVEC_MMA_F32_64xNx16_F16, n);
  CHECK(nvalid == 32);
  CHECK(wv_mma_n_valid(WAVEC_MMA_F32_64xNx16_BF16, 256));
  CHECK(!wv_mma_n_valid(WAVEC_MMA_F32_64xNx16_BF16, 0));
  CHECK(wv_mma_elems(WAVEC_MMA_F32_64xNx16_F16, WV_ACC, 12) == -1);
  CHECK(wv_mma_n_valid(WAVEC_MMA_F32_16x8x16_F16, 0));
  CHECK(wv_mma_n_valid(WAVEC_MMA_F32_16x8x16_F16, 8));
  CHECK(!wv_mma_n_valid(WAVEC_MMA_F32_16x8x16_F16, 16));
  CHECK(wv_mma_elems(WAVEC_MMA_F32_16x8x16_F16, WV_LHS, 0) == 8);
  CHECK(wv_mma_elems(WAVEC_MMA_F32_16x8x16_F16, WV_RHS, 0) == 4);
  CHECK(wv_mma_elems(WAVEC_MMA_F32_32x32x8_F16, WV_ACC, 0) == 16);
  CHECK(wv_mma_elems(WAVEC_MMA_F32_64xNx16_F16, WV_ACC, 256) == 128);
}

/* For every mma, role and (for wgmma) every N: lanes x elements land on
 * every cell of the tile exactly once. */
static void test_bijection(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  for (int k = 0; k < WAVEC_MMA_COUNT; k++) {
    wavec_mma_kind kind = (wavec_mma_kind)k;
    for (int n = is_wgmma(kind) ? 8 : 0; n <= (is_wgmma(kind) ? 256 : 0);
         n += 8) {
      for (int r = 0; r < WV_ROLE_COUNT; r++) {
        if (wv_mma_role_in_shared(kind, (wv_role)r)) {
          CHECK(is_wgmma(kind) && r == WV_RHS);
          CHECK(wv_mma_elems(kind, (wv_role)r, n) == 0);
          continue;
        }
        tab t;
        CHECKF(eval_tab(ctx, kind, (wv_role)r, n, &t), "%s %s N=%d: %s",
               mma_names[k], wv_role_names[r], n, wavec_errmsg(ctx));
        CHECK(t.lanes * t.elems == t.rows * t.cols);
        char *seen = calloc((size_t)(t.rows * t.cols), 1);
        bool ok = true;
        for (int l = 0; l < t.lanes; l++) {
          for (int e = 0; e < t.elems; e++) {
            int64_t a = at(&t, l, e, 0), b = at(&t, l, e, 1);
            if (a < 0 || a >= t.rows || b < 0 || b >= t.cols ||
                seen[a * t.cols + b]++) {
              ok = false;
            }
          }
        }
        CHECKF(ok, "%s %s N=%d is not a bijection", mma_names[k],
               wv_role_names[r], n);
        free(seen);
      }
    }
  }
  CHECK(wavec_errcode(ctx) == WAVEC_OK);
  wavec_ctx_free(ctx);
}

/* ---- the vendors' facts
 * ------------------------------------------------------ */

/* PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type",
 * in its piecewise form. */
static void test_ptx_m16n8k16(void) {
  wavec_mma_kind kinds[2] = {WAVEC_MMA_F32_16x8x16_F16,
                             WAVEC_MMA_F32_16x8x16_BF16};
  for (int q = 0; q < 2; q++) {
    wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
    tab a, b, c;
    CHECK(eval_tab(ctx, kinds[q], WV_LHS, 0, &a));
    CHECK(eval_tab(ctx, kinds[q], WV_RHS, 0, &b));
    CHECK(eval_tab(ctx, kinds[q], WV_ACC, 0, &c));
    /* layouts.md's example: A, lane 5 element 2 -> row 9, col 2 */
    CHECK(at(&a, 5, 2, 0) == 9 && at(&a, 5, 2, 1) == 2);
    for (int l = 0; l < 32; l++) {
      int g = l >> 2, t = l % 4;
      for (int i = 0; i < 8; i++) {
        int row = ((i >= 0 && i < 2) || (i >= 4 && i < 6)) ? g : g + 8;
        int col = i < 4 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
        CHECKF(at(&a, l, i, 0) == row && at(&a, l, i, 1) == col,
               "A lane %d elem %d", l, i);
      }
      for (int i = 0; i < 4; i++) {
        /* B is K x N in the PTX ISA; wavec's rhs is (n, k) */
        int krow = i < 2 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
        CHECKF(at(&b, l, i, 0) == g && at(&b, l, i, 1) == krow,
               "B lane %d elem %d", l, i);
        int crow = i < 2 ? g : g + 8, ccol = t * 2 + (i & 1);
        CHECKF(at(&c, l, i, 0) == crow && at(&c, l, i, 1) == ccol,
               "C lane %d elem %d", l, i);
      }
    }
    /* a thread's accumulator rows are 8 apart */
    CHECK(at(&c, 0, 2, 0) - at(&c, 0, 0, 0) == 8);
    wavec_ctx_free(ctx);
  }
}

/* PTX ISA, "Matrix Fragments for mma.m16n8k32" (.s8, .e4m3, .e5m2), in
 * its piecewise form: A is four .b32 registers of four elements, B two. */
static void test_ptx_m16n8k32(void) {
  wavec_mma_kind kinds[3] = {WAVEC_MMA_F32_16x8x32_F8E4M3,
                             WAVEC_MMA_F32_16x8x32_F8E5M2,
                             WAVEC_MMA_S32_16x8x32_S8};
  for (int q = 0; q < 3; q++) {
    wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
    tab a, b, c;
    CHECK(eval_tab(ctx, kinds[q], WV_LHS, 0, &a));
    CHECK(eval_tab(ctx, kinds[q], WV_RHS, 0, &b));
    CHECK(eval_tab(ctx, kinds[q], WV_ACC, 0, &c));
    CHECK(a.elems == 16 && a.rows == 16 && a.cols == 32);
    CHECK(b.elems == 8 && b.rows == 8 && b.cols == 32);
    CHECK(c.elems == 4 && c.rows == 16 && c.cols == 8);
    for (int l = 0; l < 32; l++) {
      int g = l >> 2, t = l % 4;
      for (int i = 0; i < 16; i++) {
        int row = (i < 4 || (i >= 8 && i < 12)) ? g : g + 8;
        int col = i < 8 ? t * 4 + (i & 3) : t * 4 + (i & 3) + 16;
        CHECKF(at(&a, l, i, 0) == row && at(&a, l, i, 1) == col,
               "A lane %d elem %d", l, i);
      }
      for (int i = 0; i < 8; i++) {
        /* B is K x N in the PTX ISA; wavec's rhs is (n, k) */
        int krow = i < 4 ? t * 4 + (i & 3) : t * 4 + (i & 3) + 16;
        CHECKF(at(&b, l, i, 0) == g && at(&b, l, i, 1) == krow,
               "B lane %d elem %d", l, i);
      }
      for (int i = 0; i < 4; i++) {
        int crow = i < 2 ? g : g + 8, ccol = t * 2 + (i & 1);
        CHECKF(at(&c, l, i, 0) == crow && at(&c, l, i, 1) == ccol,
               "C lane %d elem %d", l, i);
      }
    }
    /* a register's four elements are consecutive along K: one 32-bit
     * word of a K-major row */
    for (int l = 0; l < 32; l++)
      for (int r = 0; r < 4; r++)
        for (int j = 1; j < 4; j++)
          CHECK(at(&a, l, 4 * r + j, 0) == at(&a, l, 4 * r, 0) &&
                at(&a, l, 4 * r + j, 1) == at(&a, l, 4 * r, 1) + j);
    wavec_ctx_free(ctx);
  }
}

/* AMD v_mfma_f32_16x16x16f16 (CDNA3 ISA; Wave's mma index expressions). */
static void test_mfma_16x16x16(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  tab a, b, c;
  CHECK(eval_tab(ctx, WAVEC_MMA_F32_16x16x16_F16, WV_LHS, 0, &a));
  CHECK(eval_tab(ctx, WAVEC_MMA_F32_16x16x16_F16, WV_RHS, 0, &b));
  CHECK(eval_tab(ctx, WAVEC_MMA_F32_16x16x16_F16, WV_ACC, 0, &c));
  for (int l = 0; l < 64; l++) {
    for (int i = 0; i < 4; i++) {
      CHECK(at(&a, l, i, 0) == l % 16 && at(&a, l, i, 1) == 4 * (l / 16) + i);
      CHECK(at(&b, l, i, 0) == l % 16 && at(&b, l, i, 1) == 4 * (l / 16) + i);
      CHECKF(at(&c, l, i, 0) == 4 * (l / 16) + i && at(&c, l, i, 1) == l % 16,
             "acc lane %d elem %d", l, i);
    }
  }
  wavec_ctx_free(ctx);
}

/* AMD v_mfma_f32_32x32x8f16. */
static void test_mfma_32x32x8(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  tab a, b, c;
  CHECK(eval_tab(ctx, WAVEC_MMA_F32_32x32x8_F16, WV_LHS, 0, &a));
  CHECK(eval_tab(ctx, WAVEC_MMA_F32_32x32x8_F16, WV_RHS, 0, &b));
  CHECK(eval_tab(ctx, WAVEC_MMA_F32_32x32x8_F16, WV_ACC, 0, &c));
  CHECK(c.elems == 16 && a.elems == 4 && b.elems == 4);
  for (int l = 0; l < 64; l++) {
    for (int i = 0; i < 4; i++) {
      CHECK(at(&a, l, i, 0) == l % 32 && at(&a, l, i, 1) == 4 * (l / 32) + i);
      CHECK(at(&b, l, i, 0) == l % 32 && at(&b, l, i, 1) == 4 * (l / 32) + i);
    }
    for (int i = 0; i < 16; i++) {
      int m = 8 * (i / 4) + 4 * (l / 32) + i % 4;
      CHECKF(at(&c, l, i, 0) == m && at(&c, l, i, 1) == l % 32,
             "acc lane %d elem %d", l, i);
    }
  }
  wavec_ctx_free(ctx);
}

/* wgmma m64nNk16: warp w owns rows 16w..16w+15 with the m16n8k16 pattern,
 * the accumulator repeating it every 8 columns; B is in shared memory. */
static void test_wgmma(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  int ns[] = {8, 16, 64, 256};
  tab a16;
  CHECK(eval_tab(ctx, WAVEC_MMA_F32_16x8x16_F16, WV_LHS, 0, &a16));
  for (size_t q = 0; q < WV_ARRAY_LEN(ns); q++) {
    int n = ns[q];
    tab a, c;
    CHECK(eval_tab(ctx, WAVEC_MMA_F32_64xNx16_BF16, WV_LHS, n, &a));
    CHECK(eval_tab(ctx, WAVEC_MMA_F32_64xNx16_F16, WV_ACC, n, &c));
    CHECK(c.elems == n / 2 && c.rows == 64 && c.cols == n);
    CHECK(a.elems == 8 && a.rows == 64 && a.cols == 16);
    for (int l = 0; l < 128; l++) {
      int w = l / 32, g = (l % 32) >> 2, t = l % 4;
      for (int i = 0; i < n / 2; i++) {
        int row = 16 * w + g + 8 * ((i >> 1) & 1);
        int col = 8 * (i >> 2) + 2 * t + (i & 1);
        CHECKF(at(&c, l, i, 0) == row && at(&c, l, i, 1) == col,
               "N=%d acc lane %d elem %d", n, l, i);
      }
      for (int i = 0; i < 8; i++) {
        CHECK(at(&a, l, i, 0) == 16 * w + at(&a16, l % 32, i, 0));
        CHECK(at(&a, l, i, 1) == at(&a16, l % 32, i, 1));
      }
    }
  }
  /* m64nNk32 (8-bit): the m16n8k32 A fragment per warp, rows offset by
   * 16w; D as for k16 */
  wavec_mma_kind k8[3] = {WAVEC_MMA_F32_64xNx32_F8E4M3,
                          WAVEC_MMA_F32_64xNx32_F8E5M2,
                          WAVEC_MMA_S32_64xNx32_S8};
  for (int q = 0; q < 3; q++) {
    tab a, c;
    CHECK(eval_tab(ctx, k8[q], WV_LHS, 64, &a));
    CHECK(eval_tab(ctx, k8[q], WV_ACC, 64, &c));
    CHECK(a.elems == 16 && a.rows == 64 && a.cols == 32 && c.elems == 32);
    CHECK(wv_mma_role_in_shared(k8[q], WV_RHS));
    for (int l = 0; l < 128; l++) {
      int w = l / 32, g = (l % 32) >> 2, t = l % 4;
      for (int i = 0; i < 16; i++) {
        int row = 16 * w + g + 8 * ((i >> 2) & 1);
        int col = 4 * t + (i & 3) + 16 * (i >> 3);
        CHECKF(at(&a, l, i, 0) == row && at(&a, l, i, 1) == col,
               "k32 A lane %d elem %d", l, i);
      }
      for (int i = 0; i < 32; i++) {
        int row = 16 * w + g + 8 * ((i >> 1) & 1);
        int col = 8 * (i >> 2) + 2 * t + (i & 1);
        CHECKF(at(&c, l, i, 0) == row && at(&c, l, i, 1) == col,
               "k32 D lane %d elem %d", l, i);
      }
    }
  }
  CHECK(wv_mma_role_in_shared(WAVEC_MMA_F32_64xNx16_F16, WV_RHS));
  CHECK(!wv_mma_role_in_shared(WAVEC_MMA_F32_64xNx16_F16, WV_LHS));
  CHECK(!wv_mma_role_in_shared(WAVEC_MMA_F32_16x8x16_F16, WV_RHS));
  wavec_ctx_free(ctx);

  /* asking for the fragment of a shared-memory operand is a caller bug */
  ctx = wavec_ctx_new(NULL, NULL);
  tab r;
  CHECK(!eval_tab(ctx, WAVEC_MMA_F32_64xNx16_F16, WV_RHS, 64, &r));
  CHECK(wavec_errcode(ctx) == WAVEC_ERR_INTERNAL);
  wavec_ctx_free(ctx);
}

/* Two adjacent n8 accumulator tiles of one row block, converted to f16, are
 * exactly a k16 A operand (the register reuse FlashAttention-2 relies on for
 * P·V): A element i of lane l is element i mod 4 of the accumulator tile
 * i / 4, whose columns sit 8*(i / 4) further right. Likewise, on Hopper, the
 * wgmma accumulator elements 8j..8j+7 are the A operand of k-block j. */
static void test_acc_as_operand(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  tab a, c;
  CHECK(eval_tab(ctx, WAVEC_MMA_F32_16x8x16_F16, WV_LHS, 0, &a));
  CHECK(eval_tab(ctx, WAVEC_MMA_F32_16x8x16_F16, WV_ACC, 0, &c));
  for (int l = 0; l < 32; l++) {
    for (int i = 0; i < 8; i++) {
      int tile = i / 4, e = i % 4;
      CHECKF(at(&a, l, i, 0) == at(&c, l, e, 0) &&
                 at(&a, l, i, 1) == at(&c, l, e, 1) + 8 * tile,
             "lane %d A elem %d", l, i);
    }
  }
  tab wa, wc;
  CHECK(eval_tab(ctx, WAVEC_MMA_F32_64xNx16_F16, WV_LHS, 64, &wa));
  CHECK(eval_tab(ctx, WAVEC_MMA_F32_64xNx16_F16, WV_ACC, 64, &wc));
  for (int l = 0; l < 128; l++)
    for (int j = 0; j < 4; j++)
      for (int i = 0; i < 8; i++)
        CHECK(at(&wa, l, i, 0) == at(&wc, l, 8 * j + i, 0) &&
              at(&wa, l, i, 1) + 16 * j == at(&wc, l, 8 * j + i, 1));
  wavec_ctx_free(ctx);
}

/* ---- the checker ------------------------------------------------------------
 */

static bool fill(wavec_ctx *ctx, int lanes, int elems, int rows, int cols,
                 const char *row, bool *result) {
  WV_GUARD(ctx, false);
  wavec_sym ls = wavec_symbol(ctx, "l"), es = wavec_symbol(ctx, "e");
  ex_t l = ex_sym(ctx, ls), e = ex_sym(ctx, es);
  ex_t coord[2];
  /* rows: "dup": l mod 2 (two lanes on one cell); "gap": 2*l (skips rows);
   * "out": l + 1 (past the tile) */
  if (!strcmp(row, "dup"))
    coord[0] = ex_mod(ctx, l, ex_const(ctx, 2));
  else if (!strcmp(row, "gap"))
    coord[0] = ex_mul(ctx, ex_const(ctx, 2), l);
  else
    coord[0] = ex_add(ctx, l, ex_const(ctx, 1));
  coord[1] = e;
  int32_t owner[64];
  *result = wv_layout_fill(ctx, "test", lanes, elems, rows, cols, ls, es, coord,
                           owner);
  WV_UNGUARD(ctx);
  return true;
}

static void test_fill_rejects(void) {
  static const struct {
    const char *row;
    int lanes, rows;
    const char *msg;
  } cases[] = {{"dup", 4, 4, "both map to"},
               {"gap", 2, 4, "no lane holds"},
               {"out", 4, 4, "outside the 4 x 2 tile"}};
  for (size_t i = 0; i < WV_ARRAY_LEN(cases); i++) {
    wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
    bool ok = true;
    CHECK(fill(ctx, cases[i].lanes, 2, cases[i].rows, 2, cases[i].row, &ok));
    CHECK(!ok);
    CHECK(wavec_errcode(ctx) == WAVEC_ERR_INTERNAL);
    CHECKF(strstr(wavec_errmsg(ctx), cases[i].msg) != NULL, "%s",
           wavec_errmsg(ctx));
    wavec_ctx_free(ctx);
  }
}

/* ---- the view
 * ----------------------------------------------------------------- */

static const char expect_16x8x16_acc[] =
    "F32_16x8x16_F16 acc: rows m 0..15, cols n 0..7, cell lane:elem; 32 lanes "
    "x 4 elements; mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32\n"
    "m\\n    0    1    2    3    4    5    6    7\n"
    "  0  0:0  0:1  1:0  1:1  2:0  2:1  3:0  3:1\n"
    "  1  4:0  4:1  5:0  5:1  6:0  6:1  7:0  7:1\n"
    "  2  8:0  8:1  9:0  9:1 10:0 10:1 11:0 11:1\n"
    "  3 12:0 12:1 13:0 13:1 14:0 14:1 15:0 15:1\n"
    "  4 16:0 16:1 17:0 17:1 18:0 18:1 19:0 19:1\n"
    "  5 20:0 20:1 21:0 21:1 22:0 22:1 23:0 23:1\n"
    "  6 24:0 24:1 25:0 25:1 26:0 26:1 27:0 27:1\n"
    "  7 28:0 28:1 29:0 29:1 30:0 30:1 31:0 31:1\n"
    "  8  0:2  0:3  1:2  1:3  2:2  2:3  3:2  3:3\n"
    "  9  4:2  4:3  5:2  5:3  6:2  6:3  7:2  7:3\n"
    " 10  8:2  8:3  9:2  9:3 10:2 10:3 11:2 11:3\n"
    " 11 12:2 12:3 13:2 13:3 14:2 14:3 15:2 15:3\n"
    " 12 16:2 16:3 17:2 17:3 18:2 18:3 19:2 19:3\n"
    " 13 20:2 20:3 21:2 21:3 22:2 22:3 23:2 23:3\n"
    " 14 24:2 24:3 25:2 25:3 26:2 26:3 27:2 27:3\n"
    " 15 28:2 28:3 29:2 29:3 30:2 30:3 31:2 31:3\n";

static void test_render_text(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  const char *out = NULL;
  CHECK(wavec_layout_render(ctx, "F32_16x8x16_F16", "acc", 0, 0, &out) ==
        WAVEC_OK);
  CHECKF(out && strcmp(out, expect_16x8x16_acc) == 0, "got:\n%s", out);
  /* role NULL is acc; N 8 is the fixed N */
  const char *out2 = NULL;
  CHECK(wavec_layout_render(ctx, "F32_16x8x16_F16", NULL, 8, 0, &out2) ==
        WAVEC_OK);
  CHECK(out2 && strcmp(out2, expect_16x8x16_acc) == 0);
  /* every size renders */
  for (int k = 0; k < WAVEC_MMA_COUNT; k++)
    for (int r = 0; r < WV_ROLE_COUNT; r++)
      CHECKF(wavec_layout_render(ctx, mma_names[k], wv_role_names[r],
                                 is_wgmma((wavec_mma_kind)k) ? 256 : 0, 0,
                                 &out) == WAVEC_OK,
             "%s %s: %s", mma_names[k], wv_role_names[r], wavec_errmsg(ctx));
  /* the wgmma rhs is in shared memory */
  CHECK(wavec_layout_render(ctx, "F32_64xNx16_F16", "rhs", 8, 0, &out) ==
        WAVEC_OK);
  CHECK(out && strstr(out, "shared memory") && strstr(out, " shared shared"));
  CHECK(out && !strstr(out, "0:0"));
  /* wgmma N defaults to 16 */
  CHECK(wavec_layout_render(ctx, "F32_64xNx16_F16", "acc", 0, 0, &out) ==
        WAVEC_OK);
  CHECK(out && strstr(out, "(N=16)") && strstr(out, "cols n 0..15"));
  CHECK(wavec_errcode(ctx) == WAVEC_OK);
  wavec_ctx_free(ctx);
}

static size_t count(const char *s, const char *needle) {
  size_t n = 0;
  for (const char *p = s; (p = strstr(p, needle)) != NULL; p++)
    n++;
  return n;
}

static void test_render_svg(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  const char *out = NULL;
  CHECK(wavec_layout_render(ctx, "F32_16x8x16_F16", "lhs", 0, 1, &out) ==
        WAVEC_OK);
  CHECK(out && strncmp(out, "<?xml", 5) == 0 && strstr(out, "<svg "));
  size_t len = out ? strlen(out) : 0;
  CHECK(len > 7 && strcmp(out + len - 7, "</svg>\n") == 0);
  /* a background and one rect per cell */
  CHECK(out && count(out, "<rect") == 1 + 16 * 16);
  CHECK(out && strstr(out, "<title>lane 5, element 2: m 9, k 2</title>"));
  CHECK(out && strstr(out, ">5:2</text>"));
  CHECK(out && strstr(out, "<title>F32_16x8x16_F16 lhs</title>"));
  CHECK(wavec_layout_render(ctx, "F32_64xNx16_BF16", "rhs", 8, 1, &out) ==
        WAVEC_OK);
  CHECK(out && count(out, ">shared</text>") == 8 * 16);
  wavec_ctx_free(ctx);
}

static void test_render_bad(void) {
  static const struct {
    const char *mma, *role;
    int n;
    const char *msg[3];
  } cases[] = {
      {"F32_16x8x16",
       "acc",
       0,
       {"unknown mma type 'F32_16x8x16'", "F32_16x8x16_F16",
        "F32_64xNx16_BF16"}},
      {NULL, "acc", 0, {"unknown mma type", "F32_32x32x8_F16", NULL}},
      {"F32_16x16x16_F16",
       "out",
       0,
       {"unknown mma role 'out'", "lhs, rhs or acc", NULL}},
      {"F32_64xNx16_F16", "acc", 12, {"N = 12", "8, 16, 24, ..., 256", NULL}},
      {"F32_64xNx16_F16", "lhs", 264, {"N = 264", NULL, NULL}},
      {"F32_32x32x8_F16", "acc", 16, {"whose N is 32", NULL, NULL}},
  };
  for (size_t i = 0; i < WV_ARRAY_LEN(cases); i++) {
    wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
    const char *out = "unchanged";
    CHECK(wavec_layout_render(ctx, cases[i].mma, cases[i].role, cases[i].n, 0,
                              &out) == WAVEC_ERR_INVALID);
    CHECK(out == NULL);
    wavec_diag_info d;
    CHECK(wavec_diag_count(ctx) == 1 && wavec_diag(ctx, 0, &d) == WAVEC_OK);
    CHECK(d.code == 901 && d.status == WAVEC_ERR_INVALID);
    for (int m = 0; m < 3 && cases[i].msg[m]; m++)
      CHECKF(strstr(d.message, cases[i].msg[m]) != NULL, "%s", d.message);
    wavec_ctx_free(ctx);
  }
}

/* ---- targets
 * -------------------------------------------------------------------- */

static void test_targets(void) {
  const char *names[] = {"sim", "sm_80", "sm_89", "sm_90", "sm_90a"};
  CHECK(wv_target_count() == 5);
  for (int i = 0; i < 5; i++) {
    const wv_target *t = wv_target_get(names[i]);
    CHECKF(t && t == wv_target_at(i), "%s", names[i]);
    if (!t)
      continue;
    CHECK(t->lanes == 32 && t->max_threads == 1024);
    CHECK(t->smem_bytes == 48 * 1024);
    CHECK(t->smem_optin_bytes >= t->smem_bytes);
    CHECK(wv_target_has_mma(t, t->mma));
    CHECK(t->has_cp_async && t->has_ldmatrix);
  }
  CHECK(wv_target_get("sm_90")->smem_optin_bytes == 227 * 1024);
  CHECK(wv_target_get("sm_90a")->smem_optin_bytes == 227 * 1024);
  CHECK(wv_target_get("sm_80")->smem_optin_bytes == 163 * 1024);
  CHECK(wv_target_get("sm_90a")->has_wgmma && wv_target_get("sm_90a")->has_tma);
  CHECK(!wv_target_get("sm_90")->has_wgmma && wv_target_get("sm_90")->has_tma);
  CHECK(!wv_target_get("sm_80")->has_wgmma && !wv_target_get("sm_80")->has_tma);
  CHECK(strcmp(wv_target_get("sm_90a")->ptx_target, "sm_90a") == 0);
  CHECK(wv_target_get("sm_100") == NULL && wv_target_get(NULL) == NULL);
  CHECK(wv_target_at(5) == NULL && wv_target_at(-1) == NULL);
  /* sm_89: fp8 mma.sync and cvt, no TMA, no wgmma, 99 KB a block */
  const wv_target *sm89 = wv_target_get("sm_89"), *sm80 = wv_target_get("sm_80");
  CHECK(sm89->sm == 89 && !sm89->has_wgmma && !sm89->has_tma &&
        sm89->smem_optin_bytes == 99 * 1024);
  CHECK(wv_target_has_mma(sm89, WAVEC_MMA_F32_16x8x32_F8E4M3));
  CHECK(wv_target_has_mma(sm89, WAVEC_MMA_F32_16x8x32_F8E5M2));
  CHECK(!wv_target_has_mma(sm80, WAVEC_MMA_F32_16x8x32_F8E4M3));
  CHECK(wv_target_has_mma(sm80, WAVEC_MMA_S32_16x8x32_S8));
  CHECK(!wv_target_has_mma(sm89, WAVEC_MMA_F32_64xNx32_F8E4M3));
  CHECK(wv_target_has_mma(wv_target_get("sm_90a"), WAVEC_MMA_S32_64xNx32_S8));
  CHECK(!wv_target_has_mma(wv_target_get("sm_90"), WAVEC_MMA_S32_64xNx32_S8));
  const wv_target *sm90a = wv_target_get("sm_90a"),
                  *sm90 = wv_target_get("sm_90"), *sim = wv_target_get("sim");
  CHECK(wv_target_has_mma(sm90a, WAVEC_MMA_F32_64xNx16_BF16));
  CHECK(!wv_target_has_mma(sm90, WAVEC_MMA_F32_64xNx16_BF16));
  CHECK(!wv_target_has_mma(sm90a, WAVEC_MMA_F32_16x16x16_F16));
  CHECK(wv_target_has_mma(sm90, WAVEC_MMA_F32_16x8x16_BF16));
  for (int k = 0; k < WAVEC_MMA_COUNT; k++)
    CHECK(wv_target_has_mma(sim, (wavec_mma_kind)k));
}

int main(void) {
  RUN(test_mma_table);
  RUN(test_bijection);
  RUN(test_ptx_m16n8k16);
  RUN(test_ptx_m16n8k32);
  RUN(test_mfma_16x16x16);
  RUN(test_mfma_32x32x8);
  RUN(test_wgmma);
  RUN(test_acc_as_operand);
  RUN(test_fill_rejects);
  RUN(test_render_text);
  RUN(test_render_svg);
  RUN(test_render_bad);
  RUN(test_targets);
  CHECK_EXIT();
}
