/* write(..., reduce = add) in the simulator (tests/kernels/reduce_add.wave):
 * the output starts with random values y0 and must end as y0 plus the
 * float64 sum, within f32 rounding (relative L2 error 1e-5; the adds of
 * one element come from several workgroups in f32):
 *  - gemm_split_k: K split over workgroups, each mma a part of the sum;
 *  - gemm_split_k_waves: K split over workgroups and over the two waves
 *    of each (their parts summed in shared memory, then half the adds
 *    each; with hardware(sum_parts = 0) each wave adds its own part);
 *  - col_sum: a sum over M split over workgroups (parts) and over two
 *    waves (reduced across them: copies, one adds);
 *  - row_sum: a sum over N across the lanes (every lane of a row holds it:
 *    one adds) and over workgroups.
 *  - gemm_add_wgmma: warpgroup mmas, the adds by the threads or by tensor
 *    reduces (hardware(adds = 2));
 *  - gemm_row_sum(_wgmma): row sums of a GEMM's result, N split over
 *    workgroups (a lane holds its row's sum twice and adds it once);
 * At sizes the tiles divide and at ragged ones. Planted: with the hook
 * add-every-copy every copy adds (col_sum and row_sum come out 2x and 32x
 * too large where they must not); a store and another thread's add to one
 * element of workgroups that nothing orders fail with E0605 at the
 * line of the second. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"
#include "tir/tir.h"

static const char *const FILE_ = "tests/kernels/reduce_add.wave";

/* Runs kernel `kn` at sizes M, N, K (hook: a planted bug or NULL) on
 * random inputs ins (up to 3, NULL after the last) and returns the
 * relative error of `out` against y0 + the sum ref_fn gives; -1 when it
 * did not run. */
typedef void (*ref_fn)(int M, int N, int K, double *const in[3], double *r);

static void gemm_ref(int M, int N, int K, double *const in[3], double *r) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int k = 0; k < K; k++)
        s += in[0][i * K + k] * in[1][j * K + k];
      r[i * N + j] += s;
    }
}

static void col_ref(int M, int N, int K, double *const in[3], double *r) {
  (void)K;
  for (int j = 0; j < N; j++)
    for (int i = 0; i < M; i++)
      r[j] += in[0][i * N + j];
}

/* c0 + a bᵀ (in: a, b, c0) and y0 + column sums (in: x, y0) */
static void gemm_acc_ref(int M, int N, int K, double *const in[3],
                         double *r) {
  for (int i = 0; i < M * N; i++)
    r[i] += in[2][i];
  gemm_ref(M, N, K, in, r);
}

static void col_init_ref(int M, int N, int K, double *const in[3],
                         double *r) {
  for (int j = 0; j < N; j++)
    r[j] += in[1][j];
  col_ref(M, N, K, in, r);
}

static void row_ref(int M, int N, int K, double *const in[3], double *r) {
  (void)K;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      r[i] += in[0][i * N + j];
}

/* y0 + the row sums of a bᵀ (in: a, b) */
static void row_sum_ref(int M, int N, int K, double *const in[3], double *r) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < K; k++)
        r[i] += in[0][i * K + k] * in[1][j * K + k];
}

static double run(const char *kn, int M, int N, int K, const char *hook,
                  const char *const ins[3], const char *out, ref_fn f) {
  char dm[32], dn[32], dk[32], dh[64];
  snprintf(dm, sizeof dm, "M=%d", M);
  snprintf(dn, sizeof dn, "N=%d", N);
  snprintf(dk, sizeof dk, "K=%d", K);
  /* (a planted bug's name, or a hardware entry KEY=VALUE) */
  snprintf(dh, sizeof dh, hook && strchr(hook, '=') ? "%s" : "hook=%s",
           hook ? hook : "");
  const char *defs[] = {dm, dn, dk, hook ? dh : NULL, NULL};
  kcase c;
  double err = -1;
  if (!kc_open(&c, FILE_, kn, NULL, defs)) {
    CHECKF(0, "%s", c.err);
    return err;
  }
  uint64_t rng = 7 + (uint64_t)M;
  double *in[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3 && ins[i]; i++)
    in[i] = kc_input(&c, ins[i], &rng);
  double *y = kc_input(&c, out, &rng); /* y0: what the adds start from */
  f(M, N, K, in, y);
  if (kc_simulate(&c))
    err = kc_rel_err(&c, out, y);
  else
    CHECKF(0, "%s", c.err);
  free(in[0]), free(in[1]), free(in[2]), free(y);
  kc_close(&c);
  return err;
}

/* A kernel whose adds go out as vectors (red.global.add.v2/v4.f32 on
 * sm_90) asks for its output's address aligned to the vector (the launch
 * refuses a view at an odd offset instead of a misaligned fault). */
static void vector_adds_align(void) {
  kcase c;
  const char *defs[] = {"M=64", "N=96", "K=128", NULL};
  bool ok = kc_open(&c, "tests/kernels/reduce_add.wave", "gemm_split_k", NULL,
                    defs);
  CHECKF(ok, "%s", c.err);
  if (ok) {
    const tir_prog *p = c.k->k.tir;
    size_t out = kc_arg(&c, "c");
    int64_t widest = 4;
    for (uint32_t i = 0; i < p->code.n; i++)
      if (p->code.v[i].op == T_REDG && p->code.v[i].imm == (int64_t)out &&
          4 * (int64_t)p->code.v[i].nlist > widest)
        widest = 4 * (int64_t)p->code.v[i].nlist;
    CHECKF(widest > 4, "no vector of adds to 'c'");
    CHECKF(tir_arg_align(p, (uint32_t)out) == widest,
           "'c' aligned to %lld bytes, its adds move %lld",
           (long long)tir_arg_align(p, (uint32_t)out), (long long)widest);
  }
  kc_close(&c);
}

static void split_k(void) {
  static const int sz[][3] = {{64, 96, 128}, {50, 70, 100}, {1, 33, 17}};
  static const char *const ins[3] = {"a", "b", NULL};
  for (size_t i = 0; i < 3; i++) {
    double e = run("gemm_split_k", sz[i][0], sz[i][1], sz[i][2], NULL, ins,
                   "c", gemm_ref);
    printf("  gemm_split_k %dx%dx%d: rel err %.2g\n", sz[i][0], sz[i][1],
           sz[i][2], e);
    CHECKF(e >= 0 && e < 1e-5, "gemm_split_k %dx%dx%d: %g", sz[i][0],
           sz[i][1], sz[i][2], e);
  }
}

/* c += a bᵀ on warpgroup mmas with tensor-copy rings: the adds by the
 * threads (red.global.add) and by tensor reduces (hardware(adds = 2)),
 * where the tiles divide and where they hang over the edge. */
static void wgmma_adds(void) {
  static const int sz[][3] = {{128, 64, 128}, {100, 72, 200}};
  static const char *const ins[3] = {"a", "b", NULL};
  static const char *const how[] = {"adds=1", "adds=2"};
  for (size_t i = 0; i < 4; i++) {
    double e = run("gemm_add_wgmma", sz[i / 2][0], sz[i / 2][1], sz[i / 2][2],
                   how[i % 2], ins, "c", gemm_ref);
    printf("  gemm_add_wgmma %dx%dx%d %s: rel err %.2g\n", sz[i / 2][0],
           sz[i / 2][1], sz[i / 2][2], how[i % 2], e);
    CHECKF(e >= 0 && e < 1e-5, "gemm_add_wgmma %dx%dx%d %s: %g", sz[i / 2][0],
           sz[i / 2][1], sz[i / 2][2], how[i % 2], e);
  }
}

/* Opens kernel kn of `file` at defs (a planted bug among them), feeds it
 * the random inputs args (NULL after the last) and checks the simulator
 * fails with an error containing want (or want2, where not NULL). */
static void planted(const char *file, const char *kn, const char *const *defs,
                    const char *const *args, const char *want,
                    const char *want2) {
  kcase c;
  bool ok = kc_open(&c, file, kn, NULL, defs);
  CHECKF(ok, "%s", c.err);
  if (ok) {
    uint64_t rng = 9;
    for (size_t i = 0; args[i]; i++)
      free(kc_input(&c, args[i], &rng));
    CHECKF(!kc_simulate(&c), "%s: ran", kn);
    CHECKF(strstr(c.err, want) || (want2 && strstr(c.err, want2)), "%s",
           c.err);
    printf("  %s: %.160s\n", kn, c.err);
  }
  kc_close(&c);
}

/* The tensor reduces' planted bugs fail in the simulator at the adding
 * write's line: no proxy fence between the buffer's writes and the
 * reduces that read it (E0603), and a thread that ends with its reduces in
 * flight (E0608); and in the one-pass backward's loop, whose every
 * iteration rewrites the buffer, no wait for the last reduces' reads
 * before it (E0603). */
static void planted_tensor_reduces(void) {
  static const char *const abc[] = {"a", "b", "c", NULL};
  const char *fence[] = {"M=100",  "N=72", "K=200",
                         "adds=2", "hook=tma-store-no-fence", NULL};
  planted(FILE_, "gemm_add_wgmma", fence, abc,
          "reduce_add.wave:95:5: error[E0603]", NULL);
  const char *drain[] = {"M=100",  "N=72", "K=200",
                         "adds=2", "hook=tma-store-no-drain", NULL};
  planted(FILE_, "gemm_add_wgmma", drain, abc,
          "reduce_add.wave:95:5: error[E0608]", NULL);
  const char *wait[] = {"B=1",    "M=200", "K2=200",
                        "N=64",   "K1=64", "adds=2",
                        "hook=tma-store-no-wait", NULL};
  static const char *const bwd[] = {"q",  "k",  "v",  "do",     "lse",
                                    "D",  "dk", "dv", "dq_acc", NULL};
  planted("examples/attention_bwd_wgmma.wave", "attention_bwd_fused_wgmma",
          wait, bwd, "attention_bwd_wgmma.wave:233:9: error[E0603]", NULL);
}

/* A reduction that leaves parts and starts from a value of its own (c0 in
 * c += c0 + a bᵀ, y0 in y += y0 + column sums): only the first part holds
 * it, so the adds leave it there once. */
static void from_a_value(void) {
  static const int sz[][3] = {{64, 96, 256}, {50, 70, 200}};
  static const char *const gemm_in[3] = {"a", "b", "c0"};
  static const char *const col_in[3] = {"x", "y0", NULL};
  for (size_t i = 0; i < 4; i++) {
    const int *z = sz[i / 2];
    bool col = i % 2;
    const char *kn = col ? "col_sum_init" : "gemm_split_k_acc";
    double e = run(kn, z[0], z[1], z[2], NULL, col ? col_in : gemm_in,
                   col ? "y" : "c", col ? col_init_ref : gemm_acc_ref);
    printf("  %s %dx%dx%d: rel err %.2g\n", kn, z[0], z[1], z[2], e);
    CHECKF(e >= 0 && e < 1e-5, "%s %dx%dx%d: %g", kn, z[0], z[1], z[2], e);
  }
}

/* K split over the two waves of each workgroup as well: the waves' parts
 * meet in shared memory, each wave adds half of the elements. */
static void split_k_waves(void) {
  static const int sz[][3] = {{64, 96, 256}, {50, 70, 200}};
  static const char *const ins[3] = {"a", "b", NULL};
  /* the parts summed in shared memory (default), or each wave's added */
  static const char *const how[] = {NULL, "sum_parts=0"};
  for (size_t i = 0; i < 4; i++) {
    double e = run("gemm_split_k_waves", sz[i / 2][0], sz[i / 2][1],
                   sz[i / 2][2], how[i % 2], ins, "c", gemm_ref);
    printf("  gemm_split_k_waves %dx%dx%d %s: rel err %.2g\n", sz[i / 2][0],
           sz[i / 2][1], sz[i / 2][2], how[i % 2] ? how[i % 2] : "", e);
    CHECKF(e >= 0 && e < 1e-5, "gemm_split_k_waves %dx%dx%d %s: %g",
           sz[i / 2][0], sz[i / 2][1], sz[i / 2][2],
           how[i % 2] ? how[i % 2] : "", e);
  }
}

/* The same on warpgroup mmas: by default the waves exchange their
 * operand instead of leaving parts (each computes half the columns over
 * the whole K tile); exchange = 0 leaves parts, summed; with the adds by
 * tensor reduces (adds = 2, the default) and by the threads. The remark
 * says which was done. */
static void split_k_wgmma(void) {
  static const int sz[][3] = {{64, 128, 256}, {100, 72, 200}, {1, 130, 40}};
  static const char *const ins[3] = {"a", "b", NULL};
  static const char *const how[] = {NULL, "exchange=0", "adds=1"};
  for (size_t i = 0; i < 3 * 3; i++) {
    const char *h = how[i % 3];
    double e = run("gemm_split_k_wgmma", sz[i / 3][0], sz[i / 3][1],
                   sz[i / 3][2], h, ins, "c", gemm_ref);
    printf("  gemm_split_k_wgmma %dx%dx%d %s: rel err %.2g\n", sz[i / 3][0],
           sz[i / 3][1], sz[i / 3][2], h ? h : "", e);
    CHECKF(e >= 0 && e < 1e-5, "gemm_split_k_wgmma %dx%dx%d %s: %g",
           sz[i / 3][0], sz[i / 3][1], sz[i / 3][2], h ? h : "", e);
  }
  /* the remark of each way */
  for (int x = 0; x < 2; x++) {
    const char *defs[] = {"M=64", "N=128", "K=256", x ? "exchange=0" : NULL,
                          NULL};
    kcase c;
    bool ok = kc_open(&c, FILE_, "gemm_split_k_wgmma", NULL, defs);
    CHECKF(ok, "%s", c.err);
    if (ok) {
      bool ex = kc_has_remark(c.k, "each wave computes 64 of its 128 "
                                   "columns over the whole tile of 'K'");
      CHECKF(ex == !x, "exchange=%d: no remark of it", !x);
      CHECKF(!x || kc_has_remark(c.k, "adds a partial sum held by 2 waves"),
             "exchange=0: no remark of the parts");
    }
    kc_close(&c);
  }
}

/* Without the barrier between the parts' writes and their reads (hook
 * drop-barrier), the simulator fails at the adding write's line: a read
 * before the other wave's write (E0602) or beside it (E0603). */
static void planted_parts_race(void) {
  static const char *const abc[] = {"a", "b", "c", NULL};
  const char *defs[] = {"M=64", "N=96", "K=256", "hook=drop-barrier", NULL};
  planted(FILE_, "gemm_split_k_waves", defs, abc,
          "reduce_add.wave:76:5: error[E0602]",
          "reduce_add.wave:76:5: error[E0603]");
}

static void sums(void) {
  static const int sz[][2] = {{96, 200}, {64, 64}, {7, 5}};
  static const char *const ins[3] = {"x", NULL, NULL};
  for (size_t i = 0; i < 3; i++) {
    double ec = run("col_sum", sz[i][0], sz[i][1], 1, NULL, ins, "y", col_ref);
    double er = run("row_sum", sz[i][0], sz[i][1], 1, NULL, ins, "z", row_ref);
    printf("  %dx%d: col_sum rel err %.2g, row_sum %.2g\n", sz[i][0],
           sz[i][1], ec, er);
    CHECKF(ec >= 0 && ec < 1e-5, "col_sum %dx%d: %g", sz[i][0], sz[i][1], ec);
    CHECKF(er >= 0 && er < 1e-5, "row_sum %dx%d: %g", sz[i][0], sz[i][1], er);
  }
}

/* Every copy adding counts a sum over the two waves (col_sum) or the 32
 * lanes of a row (row_sum) that many times: far off. */
static void planted_every_copy_adds(void) {
  static const char *const ins[3] = {"x", NULL, NULL};
  double ec = run("col_sum", 96, 200, 1, "add-every-copy", ins, "y", col_ref);
  double er = run("row_sum", 96, 200, 1, "add-every-copy", ins, "z", row_ref);
  printf("  planted add-every-copy: col_sum rel err %.2g, row_sum %.2g\n", ec,
         er);
  CHECKF(ec > 0.1, "col_sum with every copy adding: rel err %g", ec);
  CHECKF(er > 0.1, "row_sum with every copy adding: rel err %g", er);
}

static void store_and_add_conflict(void) {
  const char *defs[] = {"N=128", NULL};
  kcase c;
  bool ok = kc_open(&c, FILE_, "store_then_add", NULL, defs);
  CHECKF(ok, "%s", c.err);
  if (ok) {
    uint64_t rng = 5;
    free(kc_input(&c, "x", &rng));
    free(kc_input(&c, "y", &rng));
    CHECK(!kc_simulate(&c));
    /* (inside a workgroup a barrier orders the add after the store; the
     * last thread of workgroup 0 adds to what thread 0 of workgroup 1
     * stores, which nothing orders) */
    CHECKF(strstr(c.err, "reduce_add.wave:59:5: error[E0605]") != NULL,
           "%s", c.err);
    CHECKF(strstr(c.err, "a store to 'y' element 64, which thread 63 of "
                         "workgroup (0, 0, 0) added to") != NULL,
           "%s", c.err);
  }
  kc_close(&c);
}

/* Row sums of a GEMM's result added in memory (N split over workgroups),
 * on mma.sync and warpgroup mmas: each lane holds its row's sum in more
 * than one element and adds it once. */
static void row_sums_of_mma(void) {
  static const int sz[][3] = {{64, 128, 64}, {100, 200, 96}};
  static const char *const ins[3] = {"a", "b", NULL};
  static const char *const kn[] = {"gemm_row_sum", "gemm_row_sum_wgmma"};
  for (size_t i = 0; i < 4; i++) {
    const int *z = sz[i % 2];
    double e = run(kn[i / 2], z[0], z[1], z[2], NULL, ins, "rs", row_sum_ref);
    printf("  %s %dx%dx%d: rel err %.2g\n", kn[i / 2], z[0], z[1], z[2], e);
    CHECKF(e >= 0 && e < 1e-5, "%s %dx%dx%d: %g", kn[i / 2], z[0], z[1], z[2],
           e);
  }
}

int main(void) {
  RUN(split_k);
  RUN(vector_adds_align);
  RUN(split_k_waves);
  RUN(split_k_wgmma);
  RUN(from_a_value);
  RUN(wgmma_adds);
  RUN(planted_tensor_reduces);
  RUN(planted_parts_race);
  RUN(sums);
  RUN(planted_every_copy_adds);
  RUN(store_and_add_conflict);
  RUN(row_sums_of_mma);
  CHECK_EXIT();
}
