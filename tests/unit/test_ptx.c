/* The PTX printer and the GPU runtime's CPU-side behaviour:
 *  - every example kernel (and the benchmark GEMMs) prints PTX for sm_80,
 *    sm_90 and sm_90a: one .entry named after the kernel, one .u64
 *    parameter per argument, .reqntid of the block, mma.sync where the
 *    kernel has an mma, line information pointing at the .wave source;
 *  - the output is deterministic: the same bytes twice in one context and
 *    in a fresh one;
 *  - ptxas (on PATH, else /usr/local/cuda/bin) assembles each module for
 *    its architecture, without spilling registers and without remarking
 *    that it serialized wgmmas or added a wgmma fence (C7514, C7519); when ptxas is absent the line "SKIPPED: ptxas not
 *    found ..." says so (tests/run.sh lists it beside its summary, and
 *    .ci/run fails: CI has the toolkit);
 *  - AMD MFMA kernels are refused with WAVEC_ERR_UNSUPPORTED and a
 *    diagnostic that says what to do; bad targets and uncompiled kernels
 *    are WAVEC_ERR_INVALID;
 *  - without a CUDA driver wavec_gpu_run is WAVEC_ERR_RUNTIME, "no CUDA
 *    driver (libcuda.so.1 not found)". */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "runtime/runtime.h"
#include "support/base.h"
#include "wavec.h"

typedef struct kcase {
  const char *file, *kernel;
  const char *defs[8];
  int nvidia_hw; /* --hardware threads_per_wave=32,mma=F32_16x8x16_F16 */
  int has_mma;
  int optional;  /* skip when the file is absent */
  const char *hw[4]; /* more --hardware overrides: KEY, VALUE, ... */
} kcase;

static const kcase cases[] = {
    {"examples/gemm.wave", "gemm", {"M=128", "N=128", "K=64"}, 0, 1, 0, {NULL, NULL}},
    {"examples/attention_bwd_dkdv.wave",
     "attention_bwd_dkdv",
     {"B=1", "M=32", "K2=32", "N=32", "K1=32"},
     1, 1, 0, {NULL, NULL}},
    {"examples/attention_bwd_dkdv.wave",
     "attention_bwd_dkdv",
     {"B=2", "M=64", "K2=64", "N=64", "K1=64"},
     1, 1, 0, {NULL, NULL}},
    {"examples/attention_fwd.wave",
     "attention_fwd",
     {"B=1", "M=64", "K2=64", "N=32", "K1=32"},
     0, 1, 0, {NULL, NULL}},
    {"examples/attention_fwd.wave",
     "attention_fwd_causal",
     {"B=2", "M=128", "K2=128", "N=64", "K1=64"},
     0, 1, 0, {NULL, NULL}},
    {"examples/attention_bwd.wave",
     "attention_bwd_D",
     {"B=1", "M=64", "K2=64", "N=32", "K1=32"},
     0, 0, 1, {NULL, NULL}},
    {"examples/attention_bwd.wave",
     "attention_bwd_dkdv",
     {"B=1", "M=64", "K2=64", "N=32", "K1=32"},
     0, 1, 1, {NULL, NULL}},
    {"examples/attention_bwd.wave",
     "attention_bwd_dq",
     {"B=1", "M=64", "K2=64", "N=32", "K1=32"},
     0, 1, 1, {NULL, NULL}},
    {"examples/attention_bwd.wave",
     "attention_bwd_dkdv_causal",
     {"B=1", "M=64", "K2=64", "N=32", "K1=32"},
     0, 1, 1, {NULL, NULL}},
    {"examples/attention_bwd.wave",
     "attention_bwd_dq_causal",
     {"B=1", "M=64", "K2=64", "N=32", "K1=32"},
     0, 1, 1, {NULL, NULL}},
    {"bench/gemm.wave", "gemm_f16", {"M=256", "N=256", "K=64"}, 0, 1, 1, {NULL, NULL}},
    {"bench/gemm.wave", "gemm_bf16", {"M=256", "N=256", "K=64"}, 0, 1, 1, {NULL, NULL}},
    {"bench/gemm.wave", "gemm_bf16", {"M=256", "N=256", "K=256"}, 0, 1, 1,
     {"stages", "1"}},
    {"bench/gemm.wave", "gemm_bf16", {"M=256", "N=256", "K=256"}, 0, 1, 1,
     {"workgroups_per_sm", "2"}},
};

static const char *const targets[] = {"sm_80", "sm_90", "sm_90a"};

/* A compiled kernel in a fresh context, or NULL (the check has failed). */
static wavec_kernel *open_kernel(const kcase *c, wavec_ctx **ctxp, int nvidia) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  *ctxp = ctx;
  for (size_t i = 0; c->defs[i]; i++) {
    char name[32];
    const char *eq = strchr(c->defs[i], '=');
    memcpy(name, c->defs[i], (size_t)(eq - c->defs[i]));
    name[eq - c->defs[i]] = 0;
    wavec_define_int(ctx, name, atoll(eq + 1));
  }
  if (nvidia) {
    wavec_hardware_override(ctx, "threads_per_wave", "32");
    wavec_hardware_override(ctx, "mma", "F32_16x8x16_F16");
  }
  for (int h = 0; h < 4 && c->hw[h]; h += 2)
    CHECK(wavec_hardware_override(ctx, c->hw[h], c->hw[h + 1]) == WAVEC_OK);
  size_t len;
  char *src = slurp(c->file, &len);
  wavec_status st = src ? wavec_parse(ctx, c->file, src, len)
                        : WAVEC_ERR_INVALID;
  free(src);
  wavec_kernel *k = NULL;
  if (st == WAVEC_OK) {
    k = wavec_kernel_find(ctx, c->kernel);
    st = k ? wavec_compile(k, NULL) : WAVEC_ERR_INVALID;
  }
  CHECKF(st == WAVEC_OK, "%s %s: %s", c->file, c->kernel,
         wavec_errmsg(ctx));
  return st == WAVEC_OK ? k : NULL;
}

static size_t count(const char *s, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
    n++;
  return n;
}

static const char *ptxas(void) {
  static const char *found;
  static int looked;
  if (!looked) {
    looked = 1;
    if (system("command -v ptxas >/dev/null 2>&1") == 0)
      found = "ptxas";
    else if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0)
      found = "/usr/local/cuda/bin/ptxas";
  }
  return found;
}

static int assembled;
static char ptxas_out[8192]; /* the last assemble()'s report */
static int spills_known;     /* assemble() lets this module spill */

/* ptxas -arch=ARCH on the text; true when it assembles. */
static int assemble(const char *ptx, size_t len, const char *arch,
                    const char *what) {
  char path[64], cubin[64], cmd[256];
  snprintf(path, sizeof path, "/tmp/wavec_test_ptx_%ld.ptx", (long)getpid());
  snprintf(cubin, sizeof cubin, "/tmp/wavec_test_ptx_%ld.cubin",
           (long)getpid());
  FILE *f = fopen(path, "wb");
  if (!f)
    return 0;
  fwrite(ptx, 1, len, f);
  fclose(f);
  /* a file of its own: a tool run as root that fails may delete its
   * output, and /dev/null must stay a device */
  snprintf(cmd, sizeof cmd, "%s -v -arch=%s %s -o %s 2>&1", ptxas(), arch,
           path, cubin);
  FILE *p = popen(cmd, "r");
  char out[8192] = "";
  size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
  out[n] = 0;
  int rc = p ? pclose(p) : -1;
  remove(path);
  remove(cubin);
  CHECKF(rc == 0, "ptxas -arch=%s on %s: %s", arch, what, out);
  /* no wgmma serialized (C7514: a register of a wgmma in flight touched)
   * and no fence ptxas had to add (C7519: a register a wgmma reads written
   * after its wgmma.fence) */
  CHECKF(!strstr(out, "C7514") && !strstr(out, "C7519"),
         "ptxas -arch=%s on %s: %s", arch, what, out);
  /* and, in the warpgroup (wgmma) kernels, nothing spilled: "0 bytes
   * spill stores, 0 bytes spill loads". (bench/gemm.wave's mma.sync
   * gemm_bf16 at 128x128 on 2x2 warps spills 48 bytes at 254 registers.) */
  bool wg = strstr(ptx, "wgmma.mma_async") != NULL && !spills_known;
  for (const char *s = strstr(out, "bytes spill"); s && wg;
       s = strstr(s + 1, "bytes spill"))
    CHECKF(s >= out + 2 && s[-1] == ' ' && s[-2] == '0' &&
               (s < out + 3 || s[-3] == ' '),
           "ptxas -arch=%s on %s spills: %s", arch, what, out);
  CHECKF(!rc || strstr(out, "bytes spill"), "ptxas -v said nothing of spills: %s",
         out);
  memcpy(ptxas_out, out, sizeof out);
  assembled++;
  return rc == 0;
}

static void examples_print_and_assemble(void) {
  if (!ptxas())
    printf("SKIPPED: ptxas not found (not on PATH, not in "
           "/usr/local/cuda/bin): no PTX module is assembled\n");
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const kcase *c = &cases[i];
    if (c->optional && access(c->file, R_OK) != 0) {
      printf("  %s absent: %s skipped\n", c->file, c->kernel);
      continue;
    }
    wavec_ctx *ctx;
    wavec_kernel *k = open_kernel(c, &ctx, c->nvidia_hw);
    if (!k) {
      wavec_ctx_free(ctx);
      continue;
    }
    char what[256];
    size_t nargs = wavec_arg_count(k);
    uint32_t grid[3], block[3];
    CHECK(wavec_launch_dims(k, grid, block, NULL) == WAVEC_OK);
    for (size_t t = 0; t < 3; t++) {
      snprintf(what, sizeof what, "%s %s (%s)", c->file, c->kernel,
               targets[t]);
      const char *ptx = NULL, *again = NULL;
      size_t len = 0, len2 = 0;
      wavec_status st = wavec_emit_ptx(k, targets[t], &ptx, &len);
      CHECKF(st == WAVEC_OK, "%s: %s", what, wavec_errmsg(ctx));
      if (st != WAVEC_OK)
        break;
      CHECKF(strlen(ptx) == len, "%s: length", what);
      /* the same bytes again */
      CHECK(wavec_emit_ptx(k, targets[t], &again, &len2) == WAVEC_OK);
      CHECKF(len == len2 && memcmp(ptx, again, len) == 0,
             "%s: not deterministic", what);
      char want[160];
      snprintf(want, sizeof want, ".visible .entry %s(", c->kernel);
      CHECKF(count(ptx, ".entry") == 1 && strstr(ptx, want), "%s: entry",
             what);
      CHECKF(count(ptx, ".param .u64 ") == nargs, "%s: %zu parameters", what,
             nargs);
      snprintf(want, sizeof want, ".reqntid %u, %u, %u", block[0], block[1],
               block[2]);
      CHECKF(strstr(ptx, want), "%s: no '%s'", what, want);
      snprintf(want, sizeof want, ".target %s\n", targets[t]);
      CHECKF(strstr(ptx, ".version 8.0\n") && strstr(ptx, want),
             "%s: header", what);
      CHECKF(!c->has_mma || strstr(ptx, "mma.sync.aligned.m16n8k16.row.col."),
             "%s: no mma.sync", what);
      /* mma operands are staged with asynchronous copies */
      CHECKF(!c->has_mma || (strstr(ptx, "cp.async.cg.shared.global") &&
                             strstr(ptx, "cp.async.wait_group")),
             "%s: no cp.async", what);
      int wps = c->hw[0] && !strcmp(c->hw[0], "workgroups_per_sm");
      snprintf(want, sizeof want, ".minnctapersm %s\n", wps ? c->hw[1] : "");
      CHECKF(wps ? strstr(ptx, want) != NULL : !strstr(ptx, ".minnctapersm"),
             "%s: .minnctapersm", what);
      snprintf(want, sizeof want, ".file 1 \"%s\"", c->file);
      CHECKF(strstr(ptx, want) && strstr(ptx, "\t.loc 1 "),
             "%s: no line information", what);
      if (ptxas())
        assemble(ptx, len, targets[t], what);
    }
    wavec_ctx_free(ctx);
    /* a fresh context gives the same module */
    wavec_kernel *k2 = open_kernel(c, &ctx, c->nvidia_hw);
    const char *a = NULL;
    size_t la = 0;
    if (k2 && wavec_emit_ptx(k2, "sm_90", &a, &la) == WAVEC_OK) {
      char *first = malloc(la + 1);
      memcpy(first, a, la + 1);
      wavec_ctx_free(ctx);
      k2 = open_kernel(c, &ctx, c->nvidia_hw);
      const char *b = NULL;
      size_t lb = 0;
      CHECK(k2 && wavec_emit_ptx(k2, "sm_90", &b, &lb) == WAVEC_OK);
      CHECKF(b && la == lb && memcmp(first, b, la) == 0,
             "%s %s: differs between contexts", c->file, c->kernel);
      free(first);
    }
    wavec_ctx_free(ctx);
  }
  if (ptxas())
    printf("  %d modules assembled by ptxas\n", assembled);
}

/* The warpgroup kernels: sm_90a PTX with the wgmma fence, mma, commit
 * and wait, the lhs from registers where it is computed and the rhs
 * transposed where it is N-contiguous (the backward reads q, do and k
 * both ways from one staged tile), shared memory aligned for the
 * swizzle, assembled by ptxas; sm_80 and sm_90 refuse them, naming sm_90a. */
static void wgmma_modules(void) {
  static const struct {
    kcase c;
    int areg, bmn, fixed; /* fixed: tiles copied once (q; k and v) */
  } ws[] = {
      {{"examples/gemm_wgmma.wave", "gemm_wgmma", {"M=256", "N=256", "K=256"},
        0, 1, 0, {NULL, NULL}}, 0, 0, 0},
      {{"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
        {"B=2", "M=256", "K2=256", "N=128", "K1=128",
         "BLOCK_M=128", "BLOCK_K2=64"}, 0, 1, 0, {NULL, NULL}},
       1, 1, 1},
      {{"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma_causal",
        {"B=1", "M=256", "K2=256", "N=64", "K1=64",
         "BLOCK_M=128", "BLOCK_K2=64"}, 0, 1, 0, {NULL, NULL}},
       1, 1, 1},
      {{"bench/gemm.wave", "gemm_wgmma_bf16", {"M=256", "N=512", "K=128"}, 0,
        1, 1, {"stages", "4"}}, 0, 0, 0},
      {{"examples/attention_bwd_wgmma.wave", "attention_bwd_dkdv_wgmma",
        {"B=2", "M=256", "K2=256", "N=128", "K1=128"}, 0, 1, 0, {NULL, NULL}},
       1, 1, 1},
      {{"examples/attention_bwd_wgmma.wave", "attention_bwd_dq_wgmma_causal",
        {"B=1", "M=256", "K2=256", "N=64", "K1=64"}, 0, 1, 0, {NULL, NULL}},
       1, 1, 1},
  };
  for (size_t i = 0; i < sizeof ws / sizeof *ws; i++) {
    const kcase *c = &ws[i].c;
    if (c->optional && access(c->file, R_OK) != 0)
      continue;
    wavec_ctx *ctx;
    wavec_kernel *k = open_kernel(c, &ctx, 0);
    if (k) {
      const char *ptx = NULL;
      size_t len = 0;
      CHECKF(wavec_emit_ptx(k, "sm_90a", &ptx, &len) == WAVEC_OK, "%s: %s",
             c->kernel, wavec_errmsg(ctx));
      if (ptx) {
        CHECKF(strstr(ptx, ".target sm_90a\n") &&
                   strstr(ptx, ".shared .align 1024 .b8 wv_smem") &&
                   strstr(ptx, "wgmma.fence.sync.aligned;") &&
                   strstr(ptx, "wgmma.mma_async.sync.aligned.m64n") &&
                   strstr(ptx, "wgmma.commit_group.sync.aligned;") &&
                   strstr(ptx, "wgmma.wait_group.sync.aligned 0;") &&
                   !strstr(ptx, "mma.sync"),
               "%s: not a wgmma module", c->kernel);
        /* its ring filled by tensor copies into an mbarrier ring: the
         * tensor maps as 64-aligned parameters, the barriers initialised
         * and fenced, waits by parity, no cp.async in the loop (the
         * tiles copied once where they stand still use it) */
        CHECKF(strstr(ptx, "_tmap_0[128]") &&
                   strstr(ptx, ".param .align 64 .b8 ") &&
                   strstr(ptx, "cvta.param.u64 %tm0, %tm0;") &&
                   strstr(ptx, "mbarrier.init.shared::cta.b64") &&
                   strstr(ptx, "fence.mbarrier_init.release.cluster;") &&
                   strstr(ptx, "mbarrier.arrive.expect_tx.shared::cta.b64") &&
                   strstr(ptx, "mbarrier.try_wait.parity.shared::cta.b64") &&
                   strstr(ptx, "cp.async.bulk.tensor.") &&
                   (strstr(ptx, "cp.async.cg.shared.global") != NULL) ==
                       ws[i].fixed,
               "%s: not a tensor-copy ring", c->kernel);
        /* lhs fragment packed into its own registers; rhs transposed */
        CHECKF((strstr(ptx, "{%wa0, %wa1, %wa2, %wa3}") != NULL) == ws[i].areg,
               "%s: lhs form", c->kernel);
        CHECKF((strstr(ptx, ", 1, 1, 1;") != NULL) == ws[i].bmn,
               "%s: rhs transpose", c->kernel);
        /* descriptors: one base (%wd) per operand offset of a run of
         * wgmmas, each wgmma's the base plus a constant */
        size_t nwg = count(ptx, "wgmma.mma_async"),
               nbase = count(ptx, "mov.b64 %wd");
        CHECKF(nbase > 0 && 2 * nbase <= nwg && count(ptx, ", %wd") >= nwg,
               "%s: %zu descriptor bases for %zu wgmmas", c->kernel, nbase,
               nwg);
        /* and every kernel has an mma reading both operands, K-major,
         * from shared memory (q kᵀ; kᵀ qᵀ in dk/dv) */
        CHECKF(strstr(ptx, ", 1, 1, 0, 0;") != NULL, "%s: no lhs from shared",
               c->kernel);
        if (ptxas())
          assemble(ptx, len, "sm_90a", c->kernel);
      }
      for (int t = 0; t < 2; t++) {
        const char *no = NULL;
        CHECK(wavec_emit_ptx(k, targets[t], &no, NULL) ==
              WAVEC_ERR_UNSUPPORTED);
        CHECKF(no == NULL && strstr(wavec_errmsg(ctx), "error[E0701]") &&
                   strstr(wavec_errmsg(ctx), "sm_90a"),
               "%s for %s: %s", c->kernel, targets[t], wavec_errmsg(ctx));
      }
    }
    wavec_ctx_free(ctx);
  }
}

/* The tensor maps a launcher builds (wavec_tensor_map_info): one per tile
 * a ring streams by tensor copies, over its argument, with the box of one
 * copy (64 columns, up to 256 rows, leading dims 1) and the 128-byte
 * swizzle, then the output's of the tensor stores (a 128-byte column panel
 * of the workgroup tile: 32 f32 or 64 16-bit columns, leading dims 1); as
 * many `.param
 * .align 64 .b8 NAME_tmap_I[128]` after the pointers. None with
 * hardware(copies = 1); no store's with hardware(stores = 1). */
static void tensor_map_info(void) {
  static const struct {
    kcase c;
    size_t n, arg[3], ndims;
    uint32_t box[3][3];
  } ts[] = {
      {{"examples/gemm_wgmma.wave", "gemm_wgmma", {"M=256", "N=512", "K=256"},
        0, 1, 0, {NULL, NULL}}, 3, {0, 1, 2}, 2,
       {{128, 64}, {128, 64}, {128, 32}}},
      {{"bench/gemm.wave", "gemm_wgmma_bf16", {"M=512", "N=512", "K=256"}, 0,
        1, 1, {NULL, NULL}}, 3, {0, 1, 2}, 2,
       {{128, 64}, {256, 64}, {128, 64}}},
      {{"bench/gemm.wave", "gemm_wgmma_bf16", {"M=512", "N=512", "K=256"}, 0,
        1, 1, {"stores", "1"}}, 2, {0, 1}, 2, {{128, 64}, {256, 64}}},
      {{"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
        {"B=2", "M=256", "K2=256", "N=128", "K1=128",
         "BLOCK_M=128", "BLOCK_K2=64"}, 0, 1, 0, {NULL, NULL}},
       3, {1, 2, 3}, 3, {{1, 64, 64}, {1, 64, 64}, {1, 128, 64}}},
      {{"examples/gemm_wgmma.wave", "gemm_wgmma", {"M=256", "N=512", "K=256"},
        0, 1, 0, {"copies", "1"}}, 0, {0, 0, 0}, 0, {{0}, {0}, {0}}},
  };
  for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) {
    const kcase *c = &ts[i].c;
    if (c->optional && access(c->file, R_OK) != 0)
      continue;
    wavec_ctx *ctx;
    wavec_kernel *k = open_kernel(c, &ctx, 0);
    if (k) {
      CHECKF(wavec_tensor_map_count(k) == ts[i].n, "%s: %zu tensor maps",
             c->kernel, wavec_tensor_map_count(k));
      for (size_t m = 0; m < ts[i].n && m < wavec_tensor_map_count(k); m++) {
        wavec_tensor_map_info ti;
        CHECK(wavec_tensor_map_info_get(k, m, &ti) == 0);
        CHECKF(ti.arg == ts[i].arg[m] && ti.ndims == ts[i].ndims &&
                   ti.swizzle == 128,
               "%s map %zu: arg %zu, %zu dims", c->kernel, m, ti.arg,
               ti.ndims);
        for (size_t d = 0; d < ti.ndims; d++)
          CHECKF(ti.box[d] == ts[i].box[m][d], "%s map %zu dim %zu: box %u",
                 c->kernel, m, d, ti.box[d]);
      }
      wavec_tensor_map_info ti;
      CHECK(wavec_tensor_map_info_get(k, ts[i].n, &ti) == -1);
      const char *ptx = NULL;
      CHECK(wavec_emit_ptx(k, "sm_90a", &ptx, NULL) == WAVEC_OK);
      if (ptx)
        CHECKF(count(ptx, "[128]") == ts[i].n &&
                   count(ptx, ".param .align 64 .b8 ") == ts[i].n,
               "%s: tensor map parameters", c->kernel);
    }
    wavec_ctx_free(ctx);
  }
}

/* Ragged sizes (tiles that do not divide their dimension): staged copies
 * past an edge read 0 bytes (cp.async's src-size operand zero-fills),
 * guarded loads and stores are predicated, a fill other than 0 is the
 * masked load's first value; tensor copies (TMA) need nothing, the
 * hardware fills past the tensor's edge with zeros; kernels with run-time
 * sizes take them as parameters; assembled by ptxas. */
static void ragged_modules(void) {
  static const struct {
    kcase c;
    const char *target, *want;
  } rs[] = {
      {{"examples/gemm.wave", "gemm", {"M=129", "N=250", "K=40"}, 0, 1, 0,
        {NULL, NULL}}, "sm_80", "], 16, %tr"},
      {{"examples/attention_fwd.wave", "attention_fwd_causal",
        {"B=1", "M=77", "K2=77", "N=64", "K1=64"}, 0, 1, 0, {NULL, NULL}},
       "sm_90", "], 16, %tr"},
      {{"examples/gemm.wave", "gemm", {"M=17", "N=33", "K=100"}, 0, 1, 0,
        {NULL, NULL}}, "sm_90", "@%p"},
      {{"examples/gemm_wgmma.wave", "gemm_wgmma", {"M=129", "N=250", "K=200"},
        0, 1, 0, {"copies", "1"}}, "sm_90a", "], 16, %tr"},
      /* tensor copies: the hardware fills past the tensor's edge */
      {{"examples/gemm_wgmma.wave", "gemm_wgmma", {"M=129", "N=250", "K=200"},
        0, 1, 0, {NULL, NULL}}, "sm_90a", "cp.async.bulk.tensor"},
      {{"tests/kernels/ragged.wave", "shift_fill", {"N=100"}, 0, 0, 0,
        {NULL, NULL}}, "sm_90", "mov.f32 %f1, 0fBFC00000"},
      /* a ragged key length: the register lhs p masked between wgmmas,
       * each then fenced (else ptxas adds fences of its own, C7519) */
      {{"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma_causal",
        {"B=1", "M=100", "K2=100", "N=64", "K1=64",
         "BLOCK_M=128", "BLOCK_K2=64"}, 0, 1, 0, {NULL, NULL}},
       "sm_90a", "wgmma.fence.sync.aligned;"},
      {{"examples/attention_bwd_wgmma.wave", "attention_bwd_dq_wgmma",
        {"B=1", "M=77", "K2=77", "N=64", "K1=64"}, 0, 1, 0, {NULL, NULL}},
       "sm_90a", "wgmma.fence.sync.aligned;"},
      /* run-time sizes: parameters after the pointers (and tensor maps) */
      {{"tests/kernels/dynamic.wave", "gemm_dyn", {NULL}, 0, 1, 0,
        {NULL, NULL}}, "sm_80", ".param .u32 gemm_dyn_size_2"},
      {{"tests/kernels/dynamic.wave", "gemm_dyn_wgmma", {NULL}, 0, 1, 0,
        {NULL, NULL}}, "sm_90a", "ld.param.u32 %sz2, [gemm_dyn_wgmma_size_2]"},
      {{"tests/kernels/dynamic.wave", "attention_fwd_dyn_causal",
        {"B=1", "N=64", "K1=64"}, 0, 1, 0, {NULL, NULL}}, "sm_90",
       ".param .u32 attention_fwd_dyn_causal_size_1"},
  };
  for (size_t i = 0; i < sizeof rs / sizeof *rs; i++) {
    wavec_ctx *ctx;
    wavec_kernel *k = open_kernel(&rs[i].c, &ctx, 0);
    const char *ptx = NULL;
    size_t len = 0;
    if (k) {
      CHECKF(wavec_emit_ptx(k, rs[i].target, &ptx, &len) == WAVEC_OK,
             "%s: %s", rs[i].c.kernel, wavec_errmsg(ctx));
      CHECKF(ptx && strstr(ptx, rs[i].want), "%s %s: no '%s'",
             rs[i].c.kernel, rs[i].c.defs[0], rs[i].want);
      if (ptx && ptxas())
        assemble(ptx, len, rs[i].target, rs[i].c.kernel);
    }
    wavec_ctx_free(ctx);
  }
}

/* 8-bit mma (docs/LANGUAGE-additions.md, "fp8 and int8 mma"): per kernel
 * and target, the module's mnemonic, its PTX ISA version (fp8 mma.sync
 * needs 8.4) and what packs the fragments, assembled by ptxas; the targets
 * that lack the mma refuse it with a diagnostic naming the one to use. The
 * warpgroup kernels stream K-major tiles of 128 one-byte elements through
 * tensor copies (box 128 columns). */
static void eight_bit_modules(void) {
  static const struct {
    kcase c;
    const char *target, *instr, *version, *pack;
  } es[] = {
      {{"examples/gemm_fp8.wave", "gemm_fp8", {"M=256", "N=256", "K=512"}, 0,
        1, 0, {NULL, NULL}}, "sm_90a",
       "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {", "8.0",
       ", 1, 1;"},
      {{"examples/gemm_i8.wave", "gemm_i8", {"M=256", "N=256", "K=512"}, 0, 1,
        0, {NULL, NULL}}, "sm_90a",
       "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 {", "8.0", "}, %rd0, %rd1, %tp0;"},
      {{"tests/kernels/fp8mma.wave", "gemm_e5m2", {"M=128", "N=128", "K=256"},
        0, 1, 0, {NULL, NULL}}, "sm_90a",
       "wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2 {", "8.0",
       ", 1, 1;"},
      {{"examples/gemm_fp8.wave", "gemm_fp8_sync", {"M=200", "N=72", "K=96"},
        0, 1, 0, {NULL, NULL}}, "sm_89",
       "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {", "8.4",
       ", 0x6420;"},
      {{"examples/gemm_fp8.wave", "gemm_fp8_sync", {"M=17", "N=33", "K=100"},
        0, 1, 0, {NULL, NULL}}, "sm_90",
       "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {", "8.4",
       ", 0x6420;"},
      {{"tests/kernels/fp8mma.wave", "gemm_e5m2_sync", {"M=64", "N=64", "K=64"},
        0, 1, 0, {NULL, NULL}}, "sm_89",
       "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {", "8.4",
       ", 0x6420;"},
      /* an lhs quantized in registers: the wgmma's register fragment */
      {{"tests/kernels/fp8mma.wave", "gemm_fp8_cast", {"M=128", "N=128",
        "K=256"}, 0, 1, 0, {NULL, NULL}}, "sm_90a",
       "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {", "8.0",
       "}, {%wa0, %wa1, %wa2, %wa3}, %rd"},
      {{"tests/kernels/fp8mma.wave", "gemm_i8_cast", {"M=128", "N=128",
        "K=256"}, 0, 1, 0, {NULL, NULL}}, "sm_90a",
       "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 {", "8.0",
       "prmt.b32 %wa0, "},
      /* ragged: the quantized lhs selected against the edge is an i8 in a
       * .b32 (ptxas refused `selp.b16` on it: found on the H200) */
      {{"tests/kernels/fp8mma.wave", "gemm_i8_cast", {"M=100", "N=70",
        "K=112"}, 0, 1, 0, {NULL, NULL}}, "sm_90a",
       "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 {", "8.0",
       "selp.b32 "},
      {{"tests/kernels/fp8mma.wave", "gemm_fp8_cast", {"M=17", "N=33",
        "K=112"}, 0, 1, 0, {NULL, NULL}}, "sm_90a",
       "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {", "8.0",
       "selp.b16 "},
      {{"examples/gemm_i8.wave", "gemm_i8_sync", {"M=200", "N=72", "K=96"}, 0,
        1, 0, {NULL, NULL}}, "sm_80",
       "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {", "8.0", ", 0x5410;"},
      {{"examples/gemm_i8.wave", "gemm_i8_sync", {"M=17", "N=33", "K=100"}, 0,
        1, 0, {NULL, NULL}}, "sm_89",
       "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {", "8.0", ", 0x5410;"},
  };
  for (size_t i = 0; i < sizeof es / sizeof *es; i++) {
    wavec_ctx *ctx;
    wavec_kernel *k = open_kernel(&es[i].c, &ctx, 0);
    const char *ptx = NULL;
    size_t len = 0;
    char what[160], want[64];
    snprintf(what, sizeof what, "%s %s (%s)", es[i].c.kernel,
             es[i].c.defs[2], es[i].target);
    if (k) {
      CHECKF(wavec_emit_ptx(k, es[i].target, &ptx, &len) == WAVEC_OK,
             "%s: %s", what, wavec_errmsg(ctx));
      snprintf(want, sizeof want, ".version %s\n", es[i].version);
      CHECKF(ptx && strstr(ptx, es[i].instr) && strstr(ptx, want) &&
                 strstr(ptx, es[i].pack),
             "%s: no '%s', '%s' or '%s'", what, es[i].instr, want,
             es[i].pack);
      if (ptx && ptxas())
        assemble(ptx, len, es[i].target, what);
      int wg = strstr(es[i].target, "90a") != NULL;
      if (wg) { /* tensor maps over 128-byte rows of 8-bit elements */
        wavec_tensor_map_info ti;
        CHECKF(wavec_tensor_map_count(k) >= 1 &&
                   wavec_tensor_map_info_get(k, 0, &ti) == 0 &&
                   ti.box[ti.ndims - 1] == 128 && ti.swizzle == 128,
               "%s: tensor maps", what);
      }
      /* a target without this mma refuses it, naming the one to use */
      const char *old = wg ? "sm_90" : strstr(es[i].instr, "e4m3") ||
                                       strstr(es[i].instr, "e5m2")
                                           ? "sm_80"
                                           : NULL;
      const char *no = NULL;
      if (old) {
        CHECKF(wavec_emit_ptx(k, old, &no, NULL) == WAVEC_ERR_UNSUPPORTED &&
                   !no,
               "%s for %s", what, old);
        CHECKF(strstr(wavec_errmsg(ctx), wg ? "sm_90a" : "sm_89"),
               "%s for %s: %s", what, old, wavec_errmsg(ctx));
      }
    }
    wavec_ctx_free(ctx);
  }
}

static void mfma_is_unsupported(void) {
  const kcase c = {"examples/attention_bwd_dkdv.wave",
                   "attention_bwd_dkdv",
                   {"B=1", "M=32", "K2=32", "N=32", "K1=32"},
                   0, 1, 0, {NULL, NULL}};
  wavec_ctx *ctx;
  wavec_kernel *k = open_kernel(&c, &ctx, 0); /* its own 64-lane MFMA */
  const char *ptx = NULL;
  if (k) {
    CHECK(wavec_emit_ptx(k, "sm_90", &ptx, NULL) == WAVEC_ERR_UNSUPPORTED);
    const char *m = wavec_errmsg(ctx);
    CHECKF(strstr(m, "error[E0701]") && strstr(m, "MFMA") &&
               strstr(m, "threads_per_wave=32,mma=F32_16x8x16_F16"),
           "%s", m);
    CHECK(ptx == NULL);
  }
  wavec_ctx_free(ctx);
}

static void bad_target_and_uncompiled(void) {
  const kcase c = {"examples/gemm.wave", "gemm", {"M=64", "N=64", "K=32"},
                   0, 1, 0, {NULL, NULL}};
  const char *ptx;
  const char *const bad[] = {"sim", "sm_70", NULL};
  for (size_t i = 0; i < 3; i++) {
    wavec_ctx *ctx;
    wavec_kernel *k = open_kernel(&c, &ctx, 0);
    if (k)
      CHECKF(wavec_emit_ptx(k, bad[i], &ptx, NULL) == WAVEC_ERR_INVALID,
             "target %s", bad[i] ? bad[i] : "NULL");
    wavec_ctx_free(ctx);
  }
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  size_t len;
  char *src = slurp(c.file, &len);
  CHECK(src && wavec_parse(ctx, c.file, src, len) == WAVEC_OK);
  free(src);
  wavec_kernel *k = wavec_kernel_find(ctx, "gemm");
  CHECK(k && wavec_emit_ptx(k, "sm_90", &ptx, NULL) == WAVEC_ERR_INVALID);
  CHECK(strstr(wavec_errmsg(ctx), "not compiled"));
  wavec_ctx_free(ctx);
}

static void gpu_run_without_driver(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib) {
    dlclose(lib);
    printf("  a CUDA driver is present: the no-driver case is not tested\n");
    return;
  }
  const kcase c = {"examples/gemm.wave", "gemm", {"M=64", "N=64", "K=32"},
                   0, 1, 0, {NULL, NULL}};
  wavec_ctx *ctx;
  wavec_kernel *k = open_kernel(&c, &ctx, 0);
  if (k) {
    void *bufs[3];
    for (size_t i = 0; i < 3; i++) {
      wavec_arg_info a;
      wavec_arg_info_get(k, i, &a);
      bufs[i] = calloc(1, a.bytes);
    }
    double ms = -1;
    CHECK(wavec_gpu_run(k, bufs, &ms) == WAVEC_ERR_RUNTIME);
    CHECKF(strstr(wavec_errmsg(ctx), "no CUDA driver (libcuda.so.1 not "
                                     "found)"),
           "%s", wavec_errmsg(ctx));
    CHECK(ms == -1);
    for (size_t i = 0; i < 3; i++)
      free(bufs[i]);
  }
  wavec_ctx_free(ctx);
}

/* The schedule's kernels (hardware(specialize), hardware(persistent)):
 * sm_90a PTX with a block one warpgroup larger, the registers at entry
 * fixed (.maxnreg) so that ptxas honours setmaxnreg (else its C7508), the
 * producer's setmaxnreg.dec and exit, the consumers' setmaxnreg.inc and
 * their named barrier where they synchronise; persistent tiles loop over
 * tiles from %ctaid.x. Assembled by ptxas -v: no C7508, C7514 or C7519, and
 * no spills where `spills` is 0. The benchmarks' f16/bf16 GEMMs of two
 * warpgroups of 128x256 spill nothing with either epilogue: every thread's
 * own pair stores (hardware(stores = 1)) or the tensor stores the compiler
 * picks (a swizzled shared buffer), checked with the PTX of the stores,
 * specialized and persistent. */
static void schedule_modules(void) {
  static const struct {
    const char *file, *kernel, *defs[8], *hw;
    const char *want[4];
    int spills; /* 1: not checked */
  } ss[] = {
      {"examples/gemm_wgmma.wave", "gemm_wgmma",
       {"M=4096", "N=4096", "K=4096"}, "specialize=1",
       {".reqntid 384, 1, 1", ".maxnreg 168",
        "setmaxnreg.dec.sync.aligned.u32 24;\n",
        "setmaxnreg.inc.sync.aligned.u32 240;"}, 0},
      {"examples/gemm_wgmma.wave", "gemm_wgmma",
       {"M=4096", "N=4096", "K=4096"}, "specialize=1,stages=4",
       {".reqntid 384, 1, 1", "\texit;\n", "bra.uni $Lwv_endif", NULL}, 0},
      {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
       {"B=2", "M=4096", "K2=4096", "N=128", "K1=128",
        "BLOCK_M=128", "BLOCK_K2=64"}, "specialize=1",
       {"bar.sync 1, 256;", "setmaxnreg.inc.sync.aligned.u32 240;", NULL},
       0},
      {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma_causal",
       {"B=2", "M=4096", "K2=4096", "N=64", "K1=64",
        "BLOCK_M=128", "BLOCK_K2=64"}, "specialize=1",
       {"bar.sync 1, 256;", NULL}, 0},
      {"bench/gemm.wave", "gemm_wgmma_bf16",
       {"M=4096", "N=4096", "K=4096", "BLOCK_N=128"}, "specialize=1,stages=4",
       {".reqntid 384, 1, 1", NULL}, 0},
      {"bench/gemm.wave", "gemm_wgmma_f16",
       {"M=4096", "N=4096", "K=4096", "BLOCK_M=256", "WAVES_M=4",
        "BLOCK_N=128"}, "specialize=1",
       {".reqntid 640, 1, 1", ".maxnreg 96", NULL}, 0},
      {"bench/gemm.wave", "gemm_wgmma_f16", {"M=4096", "N=4096", "K=4096"},
       "specialize=1,stages=4,stores=1", {".reqntid 384, 1, 1", NULL}, 0},
      {"bench/gemm.wave", "gemm_wgmma_f16", {"M=4096", "N=4096", "K=4096"},
       "specialize=1,stages=4", {".reqntid 384, 1, 1", NULL}, 0},
      {"bench/gemm.wave", "gemm_wgmma_bf16", {"M=8192", "N=8192", "K=8192"},
       "specialize=1,stages=4",
       {"cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group "
        "[%tm2, {",
        "fence.proxy.async.shared::cta;\n",
        "cp.async.bulk.wait_group.read 0;", "cp.async.bulk.wait_group 0;"},
       0},
      {"bench/gemm.wave", "gemm_wgmma_bf16", {"M=8192", "N=8192", "K=8192"},
       "specialize=1,persistent=1,stages=4",
       {"cp.async.bulk.commit_group;", NULL}, 0},
      {"bench/gemm.wave", "gemm_wgmma_bf16", {"M=8192", "N=8192", "K=8192"},
       "stages=3", {"cp.async.bulk.tensor.2d.global.shared::cta", NULL}, 0},
      {"examples/gemm_wgmma.wave", "gemm_wgmma",
       {"M=4096", "N=4096", "K=4096"}, "persistent=1",
       {"cp.async.bulk.tensor.2d.global.shared::cta", NULL}, 0},
      /* persistent tiles: the wgmma wait right after the K loop (else
       * C7514), no spills, with and without a producer */
      {"bench/gemm.wave", "gemm_wgmma_bf16", {"M=4096", "N=4096", "K=4096"},
       "persistent=1,stages=4", {"mov.u32 %r", "%ctaid.x;", NULL}, 0},
      {"bench/gemm.wave", "gemm_wgmma_f16",
       {"M=4096", "N=4096", "K=4096", "BLOCK_N=128"},
       "persistent=1,specialize=1,stages=4", {".reqntid 384, 1, 1", NULL}, 0},
      {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma_causal",
       {"B=2", "M=4096", "K2=4096", "N=128", "K1=128",
        "BLOCK_M=128", "BLOCK_K2=64"},
       "persistent=1,specialize=1", {"bar.sync 1, 256;", NULL}, 0},
      {"tests/kernels/dynamic.wave", "gemm_dyn_wgmma", {NULL},
       "persistent=1,specialize=1", {".param .u32 gemm_dyn_wgmma_size_2",
                                     NULL}, 0},
  };
  for (size_t i = 0; i < sizeof ss / sizeof *ss; i++) {
    wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
    for (size_t d = 0; d < 8 && ss[i].defs[d]; d++) {
      char name[32];
      const char *eq = strchr(ss[i].defs[d], '=');
      memcpy(name, ss[i].defs[d], (size_t)(eq - ss[i].defs[d]));
      name[eq - ss[i].defs[d]] = 0;
      wavec_define_int(ctx, name, atoll(eq + 1));
    }
    char hw[128];
    snprintf(hw, sizeof hw, "%s", ss[i].hw);
    for (char *kv = strtok(hw, ","); kv; kv = strtok(NULL, ",")) {
      char *eq = strchr(kv, '=');
      *eq = 0;
      CHECK(wavec_hardware_override(ctx, kv, eq + 1) == WAVEC_OK);
    }
    size_t len;
    char *src = slurp(ss[i].file, &len);
    wavec_status st = src ? wavec_parse(ctx, ss[i].file, src, len)
                          : WAVEC_ERR_INVALID;
    free(src);
    wavec_kernel *k = st == WAVEC_OK ? wavec_kernel_find(ctx, ss[i].kernel)
                                     : NULL;
    st = k ? wavec_compile(k, NULL) : WAVEC_ERR_INVALID;
    const char *ptx = NULL;
    if (st == WAVEC_OK)
      st = wavec_emit_ptx(k, "sm_90a", &ptx, &len);
    CHECKF(st == WAVEC_OK, "%s %s: %s", ss[i].kernel, ss[i].hw,
           wavec_errmsg(ctx));
    for (int w = 0; ptx && w < 4 && ss[i].want[w]; w++)
      CHECKF(strstr(ptx, ss[i].want[w]), "%s %s: no '%s'", ss[i].kernel,
             ss[i].hw, ss[i].want[w]);
    spills_known = ss[i].spills;
    int ok = ptx && ptxas() && assemble(ptx, len, "sm_90a", ss[i].kernel);
    spills_known = 0;
    if (ok) {
      CHECKF(!strstr(ptxas_out, "C7508"), "%s %s: setmaxnreg ignored: %s",
             ss[i].kernel, ss[i].hw, ptxas_out);
      CHECKF(ss[i].spills || strstr(ptxas_out, " 0 bytes spill stores"),
             "%s %s: spills: %s", ss[i].kernel, ss[i].hw, ptxas_out);
    }
    wavec_ctx_free(ctx);
  }
}

/* A layout conversion through shared memory (ds of the one-pass backward,
 * from the accumulator's layout to the next mma's lhs, a transpose): each
 * element stored once in pairs (not once a k-tile, masked), the wave's
 * region padded so that rows fall in different banks, and the operand read
 * back with ldmatrix.trans, each warp of a 128-thread wave its own. The
 * same on mma.sync (32-thread waves). */
static void converted_operands(void) {
  static const struct {
    kcase c;
    const char *target;
    size_t ldsm; /* ldmatrix .trans a module has at least */
  } cs[] = {
      {{"examples/attention_bwd_wgmma.wave", "attention_bwd_fused_wgmma",
        {"B=1", "M=200", "K2=200", "N=64", "K1=64"}, 0, 1, 0, {NULL, NULL}},
       "sm_90a", 4},
      {{"examples/attention_bwd.wave", "attention_bwd_fused",
        {"B=2", "M=128", "K2=128", "N=64", "K1=64"}, 0, 1, 0, {NULL, NULL}},
       "sm_90", 2},
  };
  for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
    wavec_ctx *ctx;
    wavec_kernel *k = open_kernel(&cs[i].c, &ctx, 0);
    const char *ptx = NULL;
    size_t len = 0;
    if (k)
      CHECKF(wavec_emit_ptx(k, cs[i].target, &ptx, &len) == WAVEC_OK, "%s: %s",
             cs[i].c.kernel, wavec_errmsg(ctx));
    if (ptx) {
      CHECKF(count(ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") >=
                 cs[i].ldsm,
             "%s: %zu ldmatrix.trans", cs[i].c.kernel,
             count(ptx, "ldmatrix.sync.aligned.m8n8.x4.trans"));
      CHECKF(count(ptx, "st.shared.b16") == 0, "%s: %zu 16-bit stores",
             cs[i].c.kernel, count(ptx, "st.shared.b16"));
      if (ptxas())
        assemble(ptx, len, cs[i].target, cs[i].c.kernel);
    }
    wavec_ctx_free(ctx);
  }
}

/* hardware(adds = 2): the one-pass backward's dq parts, summed in shared
 * memory, go out by tensor reduces (cp.reduce.async.bulk.tensor .add)
 * issued by thread 0 from a swizzled buffer, with its proxy fence and its
 * reads waited for before the next iteration writes it; no red.global is
 * left. Without the knob, reds and no tensor reduce. */
/* Case c's sm_90a PTX (the context in *ctxp, for the caller to free), or
 * NULL after a failed check naming `what`. */
static const char *sm90a_ptx(const kcase *c, wavec_ctx **ctxp, size_t *len,
                             const char *what) {
  const char *ptx = NULL;
  wavec_kernel *k = open_kernel(c, ctxp, 0);
  if (k)
    CHECKF(wavec_emit_ptx(k, "sm_90a", &ptx, len) == WAVEC_OK, "%s: %s", what,
           wavec_errmsg(*ctxp));
  return ptx;
}

static void tensor_reduces(void) {
  for (int adds = 1; adds <= 2; adds++) {
    kcase c = {"examples/attention_bwd_wgmma.wave", "attention_bwd_fused_wgmma",
               {"B=1", "M=200", "K2=200", "N=64", "K1=64"}, 0, 1, 0,
               {"adds", adds == 2 ? "2" : "1"}};
    wavec_ctx *ctx;
    size_t len = 0;
    const char *ptx =
        sm90a_ptx(&c, &ctx, &len, adds == 2 ? "adds=2" : "adds=1");
    if (ptx) {
      size_t nred = count(ptx, "cp.reduce.async.bulk.tensor.3d.global."
                               "shared::cta.add.tile.bulk_group");
      CHECKF(adds == 2 ? nred == 2 : nred == 0, "adds=%d: %zu tensor reduces",
             adds, nred);
      CHECKF((count(ptx, "red.global.add") == 0) == (adds == 2),
             "adds=%d: %zu red.global.add", adds, count(ptx, "red.global.add"));
      CHECKF(adds == 1 || (strstr(ptx, "cp.async.bulk.wait_group.read 0;") &&
                           count(ptx, "fence.proxy.async.shared::cta;") >= 2),
             "adds=%d: no wait for the buffer or no proxy fence", adds);
      if (ptxas())
        assemble(ptx, len, "sm_90a", "attention_bwd_fused_wgmma adds=2");
    }
    wavec_ctx_free(ctx);
  }
  /* at the benchmark's D = 128 the buffer, the rings, k and v, the store
   * buffer and the parts' slots fill shared memory: the slots share the
   * conversions' region there (they had a region of their own, and the
   * module asked for more than a block can have). Specialized, with the
   * dq mma leaving parts (exchange = 0) its loop body's 256 accumulator
   * registers exceed the consumers' 240: ptxas spills 48 bytes and
   * serializes the wgmmas (C7512), its spill let through. By default the
   * warpgroups exchange ds (hardware(exchange)): each computes 64 of dq's
   * 128 columns over all 128 keys (m64n64k16, twice as many), 224
   * accumulator registers, and ptxas neither spills nor serializes. */
  size_t n64 = 0;
  for (int x = 0; x < 2; x++) {
    kcase big = {"examples/attention_bwd_wgmma.wave",
                 "attention_bwd_fused_wgmma",
                 {"B=4", "M=4096", "K2=4096", "N=128", "K1=128"}, 0, 1, 0,
                 {"adds", "2", "exchange", x ? "0" : "1"}};
    wavec_ctx *ctx;
    size_t len = 0;
    const char *ptx = sm90a_ptx(&big, &ctx, &len, "adds=2 at D = 128");
    /* (s and dp are 64 columns either way) */
    if (ptx && !x)
      n64 = count(ptx, "m64n64k16");
    if (ptx && x)
      CHECKF(n64 == count(ptx, "m64n64k16") + 8,
             "wgmmas of 64 columns: %zu exchanging, %zu not", n64,
             count(ptx, "m64n64k16"));
    if (ptx && ptxas()) {
      spills_known = x;
      assemble(ptx, len, "sm_90a",
               x ? "attention_bwd_fused_wgmma adds=2 exchange=0 D=128"
                 : "attention_bwd_fused_wgmma adds=2 D=128");
      spills_known = 0;
      CHECKF(x || !strstr(ptxas_out, "C7512"),
             "exchange=1 at D = 128: wgmmas serialized: %s", ptxas_out);
    }
    wavec_ctx_free(ctx);
  }
  /* D = 64: each warpgroup's 32 columns of dq are half a 128-byte panel
   * of k's tile (wave 1's descriptor starts 64 bytes into it): 8
   * m64n32k16 a loop body. With 128 query rows a wave holds two wgmmas'
   * rows of dq (two clones), each exchanged alike: 16 (an earlier form
   * emitted one wgmma a wave and wrote registers past the result's, which
   * ptxas refused); no spill at 255 registers. */
  for (int rows = 64; rows <= 128; rows += 64) {
    kcase d64 = {"examples/attention_bwd_wgmma.wave",
                 "attention_bwd_fused_wgmma",
                 {"B=4", "M=1024", "K2=1024", "N=64", "K1=64",
                  rows == 64 ? "BLOCK_M=64" : "BLOCK_M=128"},
                 0, 1, 0, {"stages", "2", "exchange", "1"}};
    wavec_ctx *ctx;
    size_t len = 0;
    const char *ptx = sm90a_ptx(&d64, &ctx, &len,
                                rows == 64 ? "D = 64" : "D = 64, 128 rows");
    if (ptx)
      CHECKF(count(ptx, "m64n32k16") == (rows == 64 ? 8u : 16u),
             "D = 64, %d rows: %zu m64n32k16", rows, count(ptx, "m64n32k16"));
    if (ptx && ptxas()) {
      assemble(ptx, len, "sm_90a", rows == 64
                                       ? "attention_bwd_fused_wgmma D=64"
                                       : "attention_bwd_fused_wgmma D=64 "
                                         "BLOCK_M=128");
    }
    wavec_ctx_free(ctx);
  }
}

/* A kernel whose tiles hold more values a thread than its registers
 * (the forward at D = 128 on 256x128 tiles: 512 threads, 128 registers
 * each, two 64x128 f32 accumulators a warpgroup): where ptxas fails its
 * register allocation (C7600), the library's error says what to change. */
static void register_allocation_message(void) {
  if (!ptxas())
    return;
  kcase c = {"examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
             {"B=1", "M=512", "K2=512", "N=128", "K1=128", "BLOCK_M=256",
              "BLOCK_K2=128"},
             0, 1, 0, {"stages", "2"}};
  wavec_ctx *ctx;
  wavec_kernel *k = open_kernel(&c, &ctx, 0);
  const char *ptx = NULL;
  size_t len = 0;
  if (k)
    CHECKF(wavec_emit_ptx(k, "sm_90a", &ptx, &len) == WAVEC_OK, "%s",
           wavec_errmsg(ctx));
  if (ptx) {
    char *text = strndup(ptx, len);
    const void *cubin = NULL;
    size_t n = 0;
    bool failed = false;
    wv_guard g;
    g.prev = ctx->guard;
    ctx->guard = &g;
    if (setjmp(g.jb))
      failed = true;
    else
      wv_ptxas(ctx, (wavec_loc){0}, wv_ptxas_path(ctx), "sm_90a", text, len,
               &cubin, &n);
    ctx->guard = g.prev;
    const char *msg = wavec_errmsg(ctx);
    if (failed && strstr(msg, "C7600"))
      CHECKF(strstr(msg, "failed to fit the kernel's registers"), "%.300s",
             msg);
    else
      printf("  (ptxas %s this kernel: no C7600 to explain: %.200s)\n",
             failed ? "failed otherwise on" : "assembled", msg);
    free(text);
  }
  wavec_ctx_free(ctx);
}

int main(void) {
  RUN(examples_print_and_assemble);
  RUN(wgmma_modules);
  RUN(converted_operands);
  RUN(tensor_reduces);
  RUN(tensor_map_info);
  RUN(ragged_modules);
  RUN(eight_bit_modules);
  RUN(schedule_modules);
  RUN(mfma_is_unsupported);
  RUN(bad_target_and_uncompiled);
  RUN(gpu_run_without_driver);
  RUN(register_allocation_message);
  CHECK_EXIT();
}
