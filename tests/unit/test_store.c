/* Epilogues through shared memory by tensor stores (src/tir/lower_store.c),
 * in the simulator.
 *  - The warpgroup GEMMs (f32 results from examples/gemm_wgmma.wave, f16
 *    and bf16 from bench/gemm.wave) against float64, with tensor stores
 *    (the compiler's choice) and without (hardware(stores = 1)), at sizes
 *    the tiles divide and ragged ones (the tile hangs over the edge: the
 *    copy engine drops what lies outside), with warp specialization and
 *    persistent tiles on and off, and buffers of 1, 2 and 4 column panels
 *    (rounds of stores within a tile), warpgroups of two wgmmas' rows (the
 *    write's two clones stored together): each has tensor stores exactly
 *    when expected;
 *  - the shape of the program: thread 0 issues one tensor store per panel
 *    and the tile is written with no global store; a proxy fence, a wait
 *    for the buffer before each round and one for every store at the end;
 *  - the attention forward's rank-3 o (leading dim in tiles of 1, the head
 *    dim whole in each workgroup) against float64;
 *  - the remark at the write, chosen or not and why (hardware(stores = 1),
 *    cp.async rings, rows that a tensor map's 16-byte stride cannot take);
 *  - rows that no tensor map takes (not a multiple of 16 bytes): the same
 *    buffer, copied out by the threads with consecutive threads on
 *    consecutive elements, guarded at the edges (refused_rows), and a
 *    round written before every thread has read the last one is a race;
 *  - each planted bug is a race (or a store never waited for) at the
 *    write's line: no proxy fence after the writes, no wait before the
 *    buffer is written again (next round, next persistent tile), no wait
 *    before the thread ends. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"
#include "passes/dist.h"
#include "tir/tir.h"
#include "wavec.h"

static int cases_run;

static const tir_prog *prog(wavec_kernel *k) { return k->k.tir; }

static int count_op(const tir_prog *p, tir_op op) {
  int n = 0;
  for (uint32_t i = 0; i < p->code.n; i++)
    n += p->code.v[i].op == op;
  return n;
}

static bool has_remark(wavec_kernel *k, const char *text) {
  for (size_t i = 0; i < wavec_remark_count(k); i++)
    if (strstr(wavec_remark(k, i), text))
      return true;
  return false;
}

/* One GEMM c[M, N] = a[M, K] b[N, K]^T against float64; `store`: whether
 * it must have tensor stores. */
/* store: the epilogue expected: 0 direct stores, 1 tensor stores, 2 the
 * buffer copied out by the threads (BY_THREADS). */
enum { BY_THREADS = 2 };
static void gemm_case(const char *file, const char *kernel, int M, int N,
                      int K, const char *const *knobs, int store,
                      double tol, uint64_t *rng) {
  char what[256];
  kcase c;
  bool ok = kc_gemm_open(&c, file, kernel, M, N, K, knobs, what);
  CHECKF(ok, "%s: %s", what, c.err);
  if (ok) {
    const tir_prog *p = prog(c.k);
    int st = count_op(p, T_TMAST);
    CHECKF((st > 0) == (store == 1), "%s: %d tensor stores", what, st);
    static const char *const said[] = {
        "each thread stores its elements",
        "tensor stores (TMA) from a dedicated",
        ("read back by the threads, consecutive threads storing consecutive "
         "elements")};
    CHECKF(has_remark(c.k, said[store]), "%s: no remark of its epilogue",
           what);
    /* copied out: every global store is a scalar one after a shared load
     * (the tile's elements in the buffer, not the registers) */
    CHECKF(store != BY_THREADS ||
               (count_op(p, T_STGV) == 0 && count_op(p, T_STG) > 0 &&
                count_op(p, T_LDS) >= count_op(p, T_STG)),
           "%s: %d stores, %d shared loads", what, count_op(p, T_STG),
           count_op(p, T_LDS));
    double e = kc_gemm_err(&c, M, N, K, rng);
    CHECKF(e >= 0, "%s: %s", what, c.err);
    CHECKF(e < tol, "%s: rel err %.3g >= %.3g", what, e, tol);
    cases_run += e >= 0;
  }
  kc_close(&c);
}

/* The knob combinations, and whether each has tensor stores. */
static const struct {
  const char *knobs[6];
  bool store;
} combos[] = {
    {{NULL}, true},
    {{"stores=1", NULL}, false},
    {{"stores=2", "specialize=1", NULL}, true},
    {{"specialize=1", "stages=4", NULL}, true},
    {{"persistent=1", "sms=3", NULL}, true},
    {{"persistent=1", "sms=2", "specialize=1", "stages=4", NULL}, true},
    {{"persistent=1", "sms=3", "specialize=1", "stores=1", NULL}, false},
    {{"copies=1", NULL}, false},
};
enum { NCOMBOS = sizeof combos / sizeof *combos };

static void gemm_bf16_f16(void) {
  uint64_t rng = 71;
  static const int shapes[][3] = {{256, 512, 128}, {200, 72, 96},
                                  {384, 640, 192}};
  for (size_t k = 0; k < NCOMBOS; k++)
    for (size_t s = 0; s < 3; s++)
      gemm_case("bench/gemm.wave", "gemm_wgmma_bf16", shapes[s][0],
                shapes[s][1], shapes[s][2], combos[k].knobs, combos[k].store,
                1e-2, &rng);
  /* 128x128 tiles (the whole tile in one round), one warpgroup of 64 rows */
  static const char *const f16[][6] = {
      {"BLOCK_N=128", NULL},
      {"BLOCK_N=128", "persistent=1", "sms=3", "specialize=1", NULL},
      {"BLOCK_M=64", "WAVES_M=1", "BLOCK_N=128", "specialize=1", NULL},
  };
  for (size_t k = 0; k < 3; k++) {
    gemm_case("bench/gemm.wave", "gemm_wgmma_f16", 384, 640, 256, f16[k],
              true, 2e-3, &rng);
    gemm_case("bench/gemm.wave", "gemm_wgmma_f16", 200, 72, 96, f16[k],
              true, 2e-3, &rng);
  }
  /* a warpgroup of 128 rows (two wgmmas' rows: the write expands into two
   * clones, stored together by the last), 256x128 and 128x128 tiles, one
   * round a tile and two, specialized and persistent */
  static const char *const two[][7] = {
      {"BLOCK_M=256", "BLOCK_N=128", "WAVES_M=2", "stages=3", NULL},
      {"BLOCK_M=128", "BLOCK_N=128", "WAVES_M=1", "stages=3", NULL},
      {"BLOCK_M=256", "BLOCK_N=128", "WAVES_M=2", "specialize=1",
       "persistent=1", "sms=3", NULL},
  };
  for (size_t k = 0; k < 3; k++) {
    gemm_case("bench/gemm.wave", "gemm_wgmma_f16", 512, 256, 128, two[k],
              true, 2e-3, &rng);
    gemm_case("bench/gemm.wave", "gemm_wgmma_f16", 300, 200, 96, two[k],
              true, 2e-3, &rng);
  }
}

static void gemm_f32(void) {
  uint64_t rng = 73;
  static const int shapes[][3] = {{128, 128, 64}, {200, 72, 96},
                                  {384, 640, 128}};
  for (size_t k = 0; k < NCOMBOS; k++)
    for (size_t s = 0; s < 3; s++)
      gemm_case("examples/gemm_wgmma.wave", "gemm_wgmma", shapes[s][0],
                shapes[s][1], shapes[s][2], combos[k].knobs, combos[k].store,
                1e-5, &rng);
}

/* The warpgroup attention forward's o [B, M, N] (a rank-3 output, B in
 * workgroup tiles of 1, N whole in each): tensor stores of 3-dim boxes,
 * 1 or 2 panels (D = 64, 128), ragged M, plain, specialized and persistent,
 * against float64; lse keeps direct stores (one output a kernel). */
static void attention_o(void) {
  uint64_t rng = 83;
  static const struct {
    int B, M, N;
    const char *knobs[4];
  } cs[] = {{2, 256, 128, {NULL}},
            {1, 100, 64, {NULL}},
            {2, 256, 64, {"specialize=1", NULL}},
            {3, 128, 128, {"persistent=1", "sms=2", "specialize=1", NULL}}};
  for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
    char d[5][32];
    snprintf(d[0], 32, "B=%d", cs[i].B);
    snprintf(d[1], 32, "M=%d", cs[i].M);
    snprintf(d[2], 32, "K2=%d", cs[i].M);
    snprintf(d[3], 32, "N=%d", cs[i].N);
    snprintf(d[4], 32, "K1=%d", cs[i].N);
    const char *defs[10] = {d[0], d[1], d[2], d[3], d[4]};
    size_t n = 5;
    for (size_t j = 0; cs[i].knobs[j]; j++)
      defs[n++] = cs[i].knobs[j];
    kcase c;
    bool ok = kc_open(&c, "examples/attention_fwd_wgmma.wave",
                      "attention_fwd_wgmma", NULL, defs);
    CHECKF(ok, "attention %s %s: %s", d[1], d[3], c.err);
    if (!ok) {
      kc_close(&c);
      continue;
    }
    const tir_prog *p = prog(c.k);
    int st = 0;
    for (uint32_t j = 0; j < p->code.n; j++)
      if (p->code.v[j].op == T_TMAST) {
        st++;
        CHECK(p->code.v[j].nlist == 3 &&
              strcmp(p->args.v[p->tmaps.v[p->code.v[j].imm].arg].name, "o") ==
                  0);
      }
    CHECKF(st == cs[i].N / 64, "attention %s %s: %d tensor stores", d[1],
           d[3], st);
    CHECK(has_remark(c.k, "write of 'lse': each thread stores"));
    size_t B = (size_t)cs[i].B, M = (size_t)cs[i].M, N = (size_t)cs[i].N;
    double *q = kc_input(&c, "q", &rng), *k = kc_input(&c, "k", &rng),
           *v = kc_input(&c, "v", &rng);
    double *o = malloc(B * M * N * sizeof *o), *lse = malloc(B * M * sizeof *lse);
    bool ran = kc_simulate(&c);
    CHECKF(ran, "attention %s %s: %s", d[1], d[3], c.err);
    if (ran) {
      ref_attn_fwd(B, M, M, N, N, 0.125, 0, q, k, v, o, lse);
      double e = kc_rel_err(&c, "o", o);
      CHECKF(e < 1e-2, "attention %s %s: o rel err %.3g", d[1], d[3], e);
      cases_run++;
    }
    free(q), free(k), free(v), free(o), free(lse);
    kc_close(&c);
  }
}

/* Rows of 250 bf16 elements (500 bytes) cannot be a tensor map's stride:
 * direct stores, said in the remark, and the result still right. */
static void refused_rows(void) {
  uint64_t rng = 79;
  const char *knobs[] = {NULL}, *one[] = {"stores=1", NULL};
  /* rows that are not a multiple of 16 bytes (no tensor map takes them):
   * the threads copy the buffer out, guarded at the edges, with 1, 2 and
   * 4 column panels a round, specialized and persistent; odd rows (no
   * element pair aligned in every row) in bf16, f16 and f32 */
  static const char *const forms[][6] = {
      {NULL},
      {"specialize=1", "stages=4", NULL},
      {"persistent=1", "sms=2", "specialize=1", "stages=4", NULL},
      {"persistent=1", "sms=3", NULL},
  };
  for (size_t f = 0; f < 4; f++) {
    gemm_case("bench/gemm.wave", "gemm_wgmma_bf16", 129, 250, 40, forms[f],
              BY_THREADS, 1e-2, &rng);
    gemm_case("bench/gemm.wave", "gemm_wgmma_bf16", 200, 201, 96, forms[f],
              BY_THREADS, 1e-2, &rng);
    gemm_case("examples/gemm_wgmma.wave", "gemm_wgmma", 200, 201, 96,
              forms[f], BY_THREADS, 1e-5, &rng);
  }
  const char *f16[] = {"BLOCK_N=128", NULL};
  gemm_case("bench/gemm.wave", "gemm_wgmma_f16", 384, 630, 256, f16,
            BY_THREADS, 2e-3, &rng);
  gemm_case("bench/gemm.wave", "gemm_wgmma_bf16", 129, 250, 40, one, 0, 1e-2,
            &rng);
  (void)knobs;
  kcase c;
  const char *defs[] = {"M=129", "N=250", "K=40", NULL};
  CHECK(kc_open(&c, "bench/gemm.wave", "gemm_wgmma_bf16", NULL, defs));
  CHECK(has_remark(c.k, "its rows are not a multiple of 16 bytes, which a "
                        "tensor map's stride must be"));
  kc_close(&c);
  const char *st1[] = {"M=128", "N=256", "K=64", "stores=1", NULL};
  CHECK(kc_open(&c, "bench/gemm.wave", "gemm_wgmma_bf16", NULL, st1));
  CHECK(has_remark(c.k, "(not tensor stores: hardware(stores = 1))"));
  kc_close(&c);
  const char *cp[] = {"M=128", "N=256", "K=64", "copies=1", NULL};
  CHECK(kc_open(&c, "bench/gemm.wave", "gemm_wgmma_bf16", NULL, cp));
  CHECK(has_remark(c.k, "the kernel's rings are not tensor copies"));
  kc_close(&c);
}

/* The specialized 128x256 bf16 GEMM at 4 stages: a 32 KiB buffer of 2 of
 * the 4 panels, so 2 rounds a tile: per round a wait for the buffer, two
 * barriers, a fence, 2 stores by thread 0 and a commit; one wait for
 * everything at the end; no global store. */
static void program_shape(void) {
  kcase c;
  const char *defs[] = {"M=256", "N=512", "K=128", "specialize=1",
                        "stages=4", NULL};
  CHECK(kc_open(&c, "bench/gemm.wave", "gemm_wgmma_bf16", NULL, defs));
  const tir_prog *p = prog(c.k);
  CHECK(count_op(p, T_TMAST) == 4);
  CHECK(count_op(p, T_BULKCOMMIT) == 2);
  CHECK(count_op(p, T_BULKWAITR) == 2);
  CHECK(count_op(p, T_BULKWAIT) == 1);
  CHECK(count_op(p, T_FENCEPX) == 2);
  CHECK(count_op(p, T_STG) == 0);
  CHECK(has_remark(c.k, "32768-byte shared buffer holding 2 of the tile's "
                        "4 column panels"));
  /* thread 0 issues them; the tensor map is the output's, 128 x 64 */
  const tir_tmap *m = NULL;
  for (uint32_t i = 0; i < p->code.n; i++) {
    const tir_instr *in = &p->code.v[i];
    if (in->op == T_TMAST) {
      CHECK(in->c != 0 && in->nlist == 2);
      m = &p->tmaps.v[in->imm];
    }
  }
  CHECK(m && strcmp(p->args.v[m->arg].name, "c") == 0 && m->swz == 128 &&
        m->box[0] == 128 && m->box[1] == 64);
  kc_close(&c);
}

/* Each planted bug, with 2 rounds a tile and with persistent tiles, fails
 * the simulation at the write's line. */
static void bugs_are_caught(void) {
  static const struct {
    const char *hook, *code, *text;
  } bugs[] = {
      {"tma-store-no-fence", "error[E0603]", "no proxy fence"},
      {"tma-store-no-wait", "error[E0603]",
       "written while a tensor store still reads it"},
      {"tma-store-no-drain", "error[E0608]", "is never waited for"},
  };
  static const char *const forms[][6] = {
      {"specialize=1", "stages=4", NULL},
      {"persistent=1", "sms=1", "BLOCK_N=128", NULL},
  };
  for (size_t b = 0; b < 3; b++)
    for (size_t f = 0; f < 2; f++) {
      char hook[64];
      snprintf(hook, sizeof hook, "hook=%s", bugs[b].hook);
      const char *defs[10] = {"M=256", "N=256", "K=128", hook};
      size_t n = 4;
      for (size_t i = 0; forms[f][i]; i++)
        defs[n++] = forms[f][i];
      defs[n++] = NULL;
      kcase c;
      bool ok = kc_open(&c, "bench/gemm.wave", "gemm_wgmma_bf16", NULL, defs);
      CHECKF(ok, "%s: %s", bugs[b].hook, c.err);
      if (ok) {
        bool ran = kc_simulate(&c);
        CHECKF(!ran && strstr(c.err, bugs[b].code) &&
                   strstr(c.err, bugs[b].text) &&
                   strstr(c.err, "gemm.wave:77:5"),
               "%s %s: got: %s", bugs[b].hook, forms[f][0],
               ran ? "(ran)" : c.err);
      }
      kc_close(&c);
    }
}

/* Copied out by the threads, 2 rounds a tile: writing the next round into
 * the buffer without the barrier that waits for every thread's reads of
 * this one is a race at the write's line. */
static void copy_out_race(void) {
  const char *defs[] = {"M=256", "N=250",    "K=128", "specialize=1",
                        "stages=4", "hook=tma-store-no-wait", NULL};
  kcase c;
  bool ok = kc_open(&c, "bench/gemm.wave", "gemm_wgmma_bf16", NULL, defs);
  CHECKF(ok, "%s", c.err);
  if (ok) {
    CHECK(has_remark(c.k, "read back by the threads"));
    bool ran = kc_simulate(&c);
    CHECKF(!ran && strstr(c.err, "error[E0603]") &&
               strstr(c.err, "gemm.wave:77:5"),
           "got: %s", ran ? "(ran)" : c.err);
  }
  kc_close(&c);
}

int main(void) {
  RUN(copy_out_race);
  RUN(gemm_bf16_f16);
  RUN(gemm_f32);
  RUN(attention_o);
  RUN(refused_rows);
  RUN(program_shape);
  RUN(bugs_are_caught);
  printf("  %d cases simulated against float64\n", cases_run);
  CHECK_EXIT();
}
