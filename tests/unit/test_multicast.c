/* Clusters and TMA multicast (hardware(cluster = C), schedule.c and
 * lower_tma.c), in the simulator and in the PTX:
 *  - GEMMs with clusters of 2 and 4 along M, plain, specialized, persistent
 *    (with more tiles than workgroups: sms = 3 and 5 round down to a
 *    multiple of the cluster), at 2 to 4 stages, ragged along N and K,
 *    against float64; the attention forward (its keys and values the same
 *    for the query tiles of a cluster) too;
 *  - the program's shape: the multicast copies are those of the tile that
 *    does not depend on the workgroup's M (b, not a), their boxes 1/C of
 *    its rows; every release goes to every workgroup; a cluster barrier
 *    after the barriers' initialisation; the producer waits for the last
 *    releases (S waits after its loop); the PTX has .reqnctapercluster,
 *    multicast::cluster, mapa and the remote arrivals, and assembles;
 *  - the planted bugs (no cluster barrier, no producer tail, releases to
 *    the own workgroup only) fail in the simulator at the .wave line;
 *  - where a cluster cannot apply, E0408 says why. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/kcase.c"
#include "../ref/ref.c"
#include "check.h"
#include "tir/tir.h"
#include "wavec.h"

static int cases_run;

/* One GEMM c[M, N] = a[M, K] b[N, K]^T against float64. */
static void gemm_case(const char *file, const char *kernel, int M, int N,
                      int K, const char *const *knobs, double tol,
                      uint64_t *rng) {
  char what[256];
  kcase c;
  bool ok = kc_gemm_open(&c, file, kernel, M, N, K, knobs, what);
  CHECKF(ok, "%s: %s", what, c.err);
  if (ok) {
    CHECKF(kc_has_remark(c.k, "clusters of "), "%s: no cluster remark", what);
    double e = kc_gemm_err(&c, M, N, K, rng);
    CHECKF(e >= 0, "%s: %s", what, c.err);
    CHECKF(e < tol, "%s: rel err %.3g >= %.3g", what, e, tol);
    cases_run += e >= 0;
  }
  kc_close(&c);
}

static void gemm_clusters(void) {
  uint64_t rng = 91;
  static const char *const combos[][6] = {
      {"cluster=2", "stages=2", NULL},
      {"cluster=2", "stages=3", NULL},
      {"cluster=2", "specialize=1", "stages=2", NULL},
      {"cluster=2", "specialize=1", "stages=4", NULL},
      {"cluster=2", "persistent=1", "sms=3", NULL},
      {"cluster=2", "persistent=1", "sms=5", "specialize=1", NULL},
      {"cluster=2", "persistent=1", "specialize=1", NULL},
      {"cluster=4", "stages=3", NULL},
      {"cluster=4", "persistent=1", "sms=5", "specialize=1", "stages=2",
       NULL},
  };
  /* M: 2, 4 (the last ragged) and 8 workgroup tiles of 128 */
  static const int shapes[][3] = {{256, 128, 64}, {512, 200, 96},
                                  {480, 384, 256}, {1024, 256, 192}};
  for (size_t k = 0; k < sizeof combos / sizeof *combos; k++)
    for (size_t s = 0; s < 4; s++) {
      bool four = strcmp(combos[k][0], "cluster=4") == 0;
      if (four && (shapes[s][0] + 127) / 128 % 4)
        continue;
      gemm_case("examples/gemm_wgmma.wave", "gemm_wgmma", shapes[s][0],
                shapes[s][1], shapes[s][2], combos[k], 1e-5, &rng);
    }
  /* the benchmark's kernel: 128x256 tiles, bf16 out */
  static const char *const bench[] = {"BLOCK_M=128", "BLOCK_N=256",
                                      "WAVES_M=2", "cluster=2",
                                      "persistent=1", "sms=3",
                                      "specialize=1", "stages=4", NULL};
  gemm_case("bench/gemm.wave", "gemm_wgmma_bf16", 512, 520, 128, bench, 1e-2,
            &rng);
}

/* The attention forward: the keys and values of a query tile's walk are
 * the same for the cluster's query tiles (grid axis 0 is M). */
static void attention_cluster(void) {
  static const char *const knobs[][3] = {{"cluster=2", NULL},
                                         {"cluster=2", "specialize=1", NULL}};
  for (int v = 0; v < 2; v++) {
    const char *defs[12] = {"B=2", "M=256", "K2=200", "N=64", "K1=64"};
    size_t d = 5;
    for (size_t i = 0; knobs[v][i]; i++)
      defs[d++] = knobs[v][i];
    defs[d] = NULL;
    kcase c;
    bool ok = kc_open(&c, "examples/attention_fwd_wgmma.wave",
                      "attention_fwd_wgmma", NULL, defs);
    CHECKF(ok, "attention %s: %s", knobs[v][1] ? "spec" : "plain", c.err);
    if (!ok) {
      kc_close(&c);
      continue;
    }
    CHECK(kc_has_remark(c.k, "'k', 'v' multicast"));
    uint64_t rng = 17;
    double *q = kc_input(&c, "q", &rng), *k = kc_input(&c, "k", &rng),
           *vv = kc_input(&c, "v", &rng);
    double *o = malloc(2 * 256 * 64 * sizeof *o),
           *lse = malloc(2 * 256 * sizeof *lse);
    ref_attn_fwd(2, 256, 200, 64, 64, 0.125, 0, q, k, vv, o, lse);
    bool ran = kc_simulate(&c);
    CHECKF(ran, "attention cluster: %s", c.err);
    if (ran) {
      double eo = kc_rel_err(&c, "o", o);
      CHECKF(eo < 1e-2, "attention cluster: o %.3g", eo);
      cases_run++;
    }
    free(q), free(k), free(vv), free(o), free(lse);
    kc_close(&c);
  }
}

static int count(const tir_prog *p, tir_op op, int64_t imm2) {
  int n = 0;
  for (uint32_t i = 0; i < p->code.n; i++)
    n += p->code.v[i].op == op && (imm2 < 0 || p->code.v[i].imm2 == imm2);
  return n;
}

/* The program's shape and its PTX. */
static void shape(void) {
  for (int spec = 0; spec < 2; spec++) {
    const char *defs[] = {"M=512", "N=256", "K=256", "cluster=2",
                          spec ? "specialize=1" : "specialize=0", "stages=3",
                          NULL};
    kcase c;
    bool ok = kc_open(&c, "examples/gemm_wgmma.wave", "gemm_wgmma", NULL,
                      defs);
    CHECKF(ok, "spec=%d: %s", spec, c.err);
    if (!ok) {
      kc_close(&c);
      continue;
    }
    const tir_prog *p = c.k->k.tir;
    CHECKF(p->cluster == 2, "cluster %lld", (long long)p->cluster);
    /* a (its M tile) is copied by each workgroup, b multicast: 1/2 of its
     * 128 rows a box */
    int mc = 0, local = 0;
    for (uint32_t i = 0; i < p->code.n; i++) {
      const tir_instr *in = &p->code.v[i];
      if (in->op != T_TMA)
        continue;
      const tir_tmap *m = &p->tmaps.v[in->imm];
      const char *arg = p->args.v[m->arg].name;
      if (in->imm2 == TIR_TMA_MULTICAST) {
        mc++;
        CHECKF(!strcmp(arg, "b") && m->box[0] == 64, "multicast %s box %lld",
               arg, (long long)m->box[0]);
      } else {
        local++;
        CHECKF(!strcmp(arg, "a") && m->box[0] == 128, "local %s box %lld",
               arg, (long long)m->box[0]);
      }
    }
    CHECKF(mc > 0 && local > 0, "spec=%d: %d multicast, %d local copies", spec,
           mc, local);
    /* releases: all to every workgroup; one cluster barrier; the tail's
     * S = 3 waits after the last fill */
    int rel = count(p, T_MBARRIVE, TIR_ARRIVE_CLUSTER), rel_local = 0;
    for (uint32_t i = 0; i < p->code.n; i++)
      rel_local += p->code.v[i].op == T_MBARRIVE && !p->code.v[i].imm &&
                   p->code.v[i].imm2 == 0;
    CHECKF(rel > 0 && rel_local == 0, "spec=%d: %d releases to all, %d local",
           spec, rel, rel_local);
    CHECKF(count(p, T_CLUSTERBAR, -1) == 1, "spec=%d: %d cluster barriers",
           spec, count(p, T_CLUSTERBAR, -1));
    int tail = 0;
    for (uint32_t i = p->code.n; i-- > 0 && p->code.v[i].op != T_TMA;)
      tail += p->code.v[i].op == T_MBWAIT;
    CHECKF(tail >= 3, "spec=%d: %d waits after the last copy", spec, tail);
    CHECK(kc_has_remark(c.k, "clusters of 2 workgroups along grid axis 0 "
                             "('M'): 'b' multicast"));
    const char *ptx = "";
    CHECK(wavec_emit_ptx(c.k, "sm_90a", &ptx, NULL) == WAVEC_OK);
    CHECKF(strstr(ptx, ".reqnctapercluster 2, 1, 1") &&
               strstr(ptx, "complete_tx::bytes.multicast::cluster") &&
               strstr(ptx, "mapa.shared::cluster.u32") &&
               strstr(ptx, "mbarrier.arrive.shared::cluster.b64") &&
               strstr(ptx, "barrier.cluster.wait.acquire.aligned"),
           "spec=%d: the PTX lacks a cluster instruction", spec);
    kc_close(&c);
  }
}

/* Each planted bug fails in the simulator, at the .wave line. */
static void bugs_are_caught(void) {
  static const struct {
    const char *hook, *code, *text, *line;
  } bugs[] = {
      {"no-cluster-bar", "error[E0610]", "before a cluster barrier",
       "gemm_wgmma.wave:19:"},
      {"no-cluster-tail", "error[E0610]", "which ends without waiting for "
       "this arrival", "gemm_wgmma.wave:19:"},
      {"local-release", "error[E0609]", "this wait can never complete",
       "gemm_wgmma.wave:19:"},
  };
  for (size_t b = 0; b < sizeof bugs / sizeof *bugs; b++)
    for (int spec = 0; spec < 2; spec++) {
      char hook[64];
      snprintf(hook, sizeof hook, "hook=%s", bugs[b].hook);
      const char *defs[] = {"M=256", "N=256", "K=512", "cluster=2",
                            spec ? "specialize=1" : "specialize=0",
                            "stages=2", hook, NULL};
      kcase c;
      bool ok = kc_open(&c, "examples/gemm_wgmma.wave", "gemm_wgmma", NULL,
                        defs);
      CHECKF(ok, "%s: %s", bugs[b].hook, c.err);
      if (ok) {
        bool ran = kc_simulate(&c);
        CHECKF(!ran && strstr(c.err, bugs[b].code) &&
                   strstr(c.err, bugs[b].text) && strstr(c.err, bugs[b].line),
               "%s spec=%d: got: %s", bugs[b].hook, spec,
               ran ? "no failure" : c.err);
      }
      kc_close(&c);
    }
}

/* Where a cluster cannot apply: E0408 with the reason. */
static void refused(void) {
  static const struct {
    const char *file, *kernel, *defs[8], *text;
  } rows[] = {
      {"examples/gemm_wgmma.wave", "gemm_wgmma",
       {"M=256", "N=256", "K=128", "cluster=3", NULL},
       "--hardware cluster=3: a cluster is 2, 4 or 8 workgroups"},
      {"examples/gemm_wgmma.wave", "gemm_wgmma",
       {"M=384", "N=256", "K=128", "cluster=2", NULL},
       "grid axis 0 ('M') has 3 tiles, not a multiple of the cluster"},
      {"examples/gemm_wgmma.wave", "gemm_wgmma",
       {"M=256", "N=256", "K=128", "cluster=2", "copies=1", NULL},
       "no loop fills its ring by tensor copies"},
      {"examples/gemm_wgmma.wave", "gemm_wgmma",
       {"M=512", "N=256", "K=128", "cluster=2", "persistent=1", "group_m=3",
        NULL},
       "group_m is not a multiple of the cluster"},
      {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma_causal",
       {"B=2", "M=256", "K2=256", "N=64", "K1=64", "cluster=2", NULL},
       "depends on grid axis 0's tile"},
  };
  for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
    kcase c;
    bool ok = kc_open(&c, rows[r].file, rows[r].kernel, NULL, rows[r].defs);
    CHECKF(!ok && strstr(c.err, "E0408") && strstr(c.err, rows[r].text),
           "row %zu: %s", r, ok ? "compiled" : c.err);
    kc_close(&c);
  }
}

int main(void) {
  RUN(shape);
  RUN(refused);
  RUN(gemm_clusters);
  RUN(attention_cluster);
  RUN(bugs_are_caught);
  printf("  %d cases simulated against float64\n", cases_run);
  CHECK_EXIT();
}
