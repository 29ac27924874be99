/* The ABI: every public number pinned. A value of a public enum or macro
 * that changes, or a new one that is not pinned here, fails; so do the
 * layout of the public structs (on LP64), the version number and the
 * wavec_options size protocol. wavec_pass is not pinned here (its table is
 * the pipeline's). When a value is added on purpose, add its row. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "wavec.h"

typedef struct pin {
  const char *name;
  long long value, want;
} pin;
#define PIN(e, v)                                                              \
  { #e, (long long)(e), v }

static const pin pins[] = {
    /* wavec_status */
    PIN(WAVEC_OK, 0),
    PIN(WAVEC_ERR_SYNTAX, 1),
    PIN(WAVEC_ERR_TYPE, 2),
    PIN(WAVEC_ERR_CONSTRAINT, 3),
    PIN(WAVEC_ERR_BIND, 4),
    PIN(WAVEC_ERR_INVALID, 5),
    PIN(WAVEC_ERR_NOMEM, 6),
    PIN(WAVEC_ERR_UNSUPPORTED, 7),
    PIN(WAVEC_ERR_RUNTIME, 8),
    PIN(WAVEC_ERR_INTERNAL, 9),
    /* wavec_dtype */
    PIN(WAVEC_F16, 0),
    PIN(WAVEC_BF16, 1),
    PIN(WAVEC_F32, 2),
    PIN(WAVEC_I32, 3),
    PIN(WAVEC_I1, 4),
    PIN(WAVEC_F8E4M3, 5),
    PIN(WAVEC_F8E5M2, 6),
    PIN(WAVEC_I8, 7),
    /* wavec_mma_kind */
    PIN(WAVEC_MMA_NONE, -1),
    PIN(WAVEC_MMA_F32_16x8x16_F16, 0),
    PIN(WAVEC_MMA_F32_16x8x16_BF16, 1),
    PIN(WAVEC_MMA_F32_16x16x16_F16, 2),
    PIN(WAVEC_MMA_F32_32x32x8_F16, 3),
    PIN(WAVEC_MMA_F32_64xNx16_F16, 4),
    PIN(WAVEC_MMA_F32_64xNx16_BF16, 5),
    PIN(WAVEC_MMA_F32_64xNx32_F8E4M3, 6),
    PIN(WAVEC_MMA_F32_64xNx32_F8E5M2, 7),
    PIN(WAVEC_MMA_S32_64xNx32_S8, 8),
    PIN(WAVEC_MMA_F32_16x8x32_F8E4M3, 9),
    PIN(WAVEC_MMA_F32_16x8x32_F8E5M2, 10),
    PIN(WAVEC_MMA_S32_16x8x32_S8, 11),
    /* wavec_op */
    PIN(WAVEC_OP_ARG, 0),
    PIN(WAVEC_OP_SCALAR, 1),
    PIN(WAVEC_OP_REGISTER, 2),
    PIN(WAVEC_OP_READ, 3),
    PIN(WAVEC_OP_WRITE, 4),
    PIN(WAVEC_OP_MMA, 5),
    PIN(WAVEC_OP_EXP2, 6),
    PIN(WAVEC_OP_EXP, 7),
    PIN(WAVEC_OP_LOG2, 8),
    PIN(WAVEC_OP_RECIPROCAL, 9),
    PIN(WAVEC_OP_SQRT, 10),
    PIN(WAVEC_OP_RSQRT, 11),
    PIN(WAVEC_OP_ABS, 12),
    PIN(WAVEC_OP_TANH, 13),
    PIN(WAVEC_OP_NEG, 14),
    PIN(WAVEC_OP_ADD, 15),
    PIN(WAVEC_OP_SUB, 16),
    PIN(WAVEC_OP_MUL, 17),
    PIN(WAVEC_OP_DIV, 18),
    PIN(WAVEC_OP_MAXIMUM, 19),
    PIN(WAVEC_OP_MINIMUM, 20),
    PIN(WAVEC_OP_GT, 21),
    PIN(WAVEC_OP_LT, 22),
    PIN(WAVEC_OP_GE, 23),
    PIN(WAVEC_OP_LE, 24),
    PIN(WAVEC_OP_EQ, 25),
    PIN(WAVEC_OP_NE, 26),
    PIN(WAVEC_OP_SELECT, 27),
    PIN(WAVEC_OP_CAST, 28),
    PIN(WAVEC_OP_PERMUTE, 29),
    PIN(WAVEC_OP_BROADCAST, 30),
    PIN(WAVEC_OP_MAX, 31),
    PIN(WAVEC_OP_SUM, 32),
    PIN(WAVEC_OP_SELF_INDEX, 33),
    PIN(WAVEC_OP_ITERATE, 34),
    PIN(WAVEC_OP_CARRIED, 35),
    PIN(WAVEC_OP_YIELD, 36),
    PIN(WAVEC_OP_RESULT, 37),
    PIN(WAVEC_OP_REM, 38),
    /* wavec_hw_int */
    PIN(WAVEC_HW_STAGES, 0),
    PIN(WAVEC_HW_WORKGROUPS_PER_SM, 1),
    PIN(WAVEC_HW_COPIES, 2),
    PIN(WAVEC_HW_SPECIALIZE, 3),
    PIN(WAVEC_HW_PERSISTENT, 4),
    PIN(WAVEC_HW_SMS, 5),
    PIN(WAVEC_HW_GROUP_M, 6),
    PIN(WAVEC_HW_STORES, 7),
    PIN(WAVEC_HW_PINGPONG, 8),
    PIN(WAVEC_HW_OVERLAP, 9),
    PIN(WAVEC_HW_SUM_PARTS, 10),
    PIN(WAVEC_HW_ADDS, 11),
    PIN(WAVEC_HW_EXCHANGE, 12),
    PIN(WAVEC_HW_LONGEST_FIRST, 13),
    PIN(WAVEC_HW_CLUSTER, 14),
    PIN(WAVEC_HW_EARLY_MMA, 15),
    PIN(WAVEC_HW_READ_AHEAD, 16),
    PIN(WAVEC_HW_MMA_AHEAD, 17),
    /* wavec_expr_op */
    PIN(WAVEC_EXPR_ADD, 0),
    PIN(WAVEC_EXPR_SUB, 1),
    PIN(WAVEC_EXPR_MUL, 2),
    PIN(WAVEC_EXPR_DIV, 3),
    PIN(WAVEC_EXPR_FLOORDIV, 4),
    PIN(WAVEC_EXPR_MOD, 5),
    PIN(WAVEC_EXPR_CEILDIV, 6),
    PIN(WAVEC_EXPR_MIN, 7),
    PIN(WAVEC_EXPR_MAX, 8),
    /* wavec_rel */
    PIN(WAVEC_REL_NONE, 0),
    PIN(WAVEC_REL_LT, 1),
    PIN(WAVEC_REL_LE, 2),
    PIN(WAVEC_REL_GT, 3),
    PIN(WAVEC_REL_GE, 4),
    /* macros */
    PIN(WAVEC_MAX_DIMS, 8),
    PIN(WAVEC_ARG_SHARED, 1),
};
#define NPINS (sizeof pins / sizeof pins[0])

static const pin *find_pin(const char *name) {
  for (size_t i = 0; i < NPINS; i++)
    if (strcmp(pins[i].name, name) == 0)
      return &pins[i];
  return NULL;
}

static void values_are_pinned(void) {
  for (size_t i = 0; i < NPINS; i++)
    CHECKF(pins[i].value == pins[i].want, "%s is %lld, pinned at %lld",
           pins[i].name, pins[i].value, pins[i].want);
}

/* Each row of a public table: its name, its number and the count. */
typedef struct row {
  const char *name;
  long long value;
} row;
#define ROW2(e, v, ...) {#e, v},
static const row statuses[] = {WAVEC_STATUSES(ROW2)};
static const row dtypes[] = {WAVEC_DTYPES(ROW2)};
static const row mmas[] = {WAVEC_MMAS(ROW2)};
static const row ops[] = {WAVEC_OPS(ROW2)};
static const row hw_ints[] = {WAVEC_HW_INTS(ROW2)};

/* Every row is pinned, with the number of its table; the numbers are
 * 0..count-1, each once (count: the table's *_COUNT, or -1 for none). */
static void table(const char *what, const row *r, size_t n, long long count) {
  unsigned char seen[256] = {0};
  for (size_t i = 0; i < n; i++) {
    const pin *p = find_pin(r[i].name);
    CHECKF(p, "%s: %s has no pin in tests/unit/test_abi.c", what, r[i].name);
    CHECKF(!p || p->want == r[i].value,
           "%s: %s is %lld in the table, "
           "pinned at %lld",
           what, r[i].name, r[i].value, p ? p->want : 0);
    CHECKF(r[i].value >= 0 && r[i].value < (long long)n && !seen[r[i].value]++,
           "%s: %s = %lld is not one of 0..%zu once", what, r[i].name,
           r[i].value, n - 1);
  }
  if (count >= 0)
    CHECKF(count == (long long)n, "%s: COUNT is %lld, the table has %zu", what,
           count, n);
}

static void tables_are_pinned_and_dense(void) {
  table("WAVEC_STATUSES", statuses, sizeof statuses / sizeof *statuses, -1);
  table("WAVEC_DTYPES", dtypes, sizeof dtypes / sizeof *dtypes,
        WAVEC_DTYPE_COUNT);
  table("WAVEC_MMAS", mmas, sizeof mmas / sizeof *mmas, WAVEC_MMA_COUNT);
  table("WAVEC_OPS", ops, sizeof ops / sizeof *ops, WAVEC_OP_COUNT);
  table("WAVEC_HW_INTS", hw_ints, sizeof hw_ints / sizeof *hw_ints,
        WAVEC_HW_INT_COUNT);
}

/* Names the API takes or prints are part of it too. */
static void names_are_pinned(void) {
  static const char *const dt[] = {"f16", "bf16",   "f32",    "i32",
                                   "i1",  "f8e4m3", "f8e5m2", "i8"};
  for (int i = 0; i < WAVEC_DTYPE_COUNT; i++)
    CHECKF(i < 8 && strcmp(wavec_dtype_name((wavec_dtype)i), dt[i]) == 0,
           "dtype %d is named %s", i, wavec_dtype_name((wavec_dtype)i));
  static const char *const mma[] = {
      "F32_16x8x16_F16",    "F32_16x8x16_BF16",   "F32_16x16x16_F16",
      "F32_32x32x8_F16",    "F32_64xNx16_F16",    "F32_64xNx16_BF16",
      "F32_64xNx32_F8E4M3", "F32_64xNx32_F8E5M2", "S32_64xNx32_S8",
      "F32_16x8x32_F8E4M3", "F32_16x8x32_F8E5M2", "S32_16x8x32_S8"};
  static const char *const mma_names[] = {
#define X(e, v, name) [e] = name,
      WAVEC_MMAS(X)
#undef X
  };
  for (int i = 0; i < WAVEC_MMA_COUNT; i++)
    CHECKF(i < 12 && strcmp(mma_names[i], mma[i]) == 0, "mma %d is named %s", i,
           mma_names[i]);
  static const char *const hw[] = {"stages",     "workgroups_per_sm",
                                   "copies",     "specialize",
                                   "persistent", "sms",
                                   "group_m",    "stores",
                                   "pingpong",   "overlap",
                                   "sum_parts",  "adds",
                                   "exchange",   "longest_first",
                                   "cluster",    "early_mma",
                                   "read_ahead", "mma_ahead"};
  static const char *const hw_names[] = {
#define X(e, v, name, lo, hi) [e] = name,
      WAVEC_HW_INTS(X)
#undef X
  };
  for (int i = 0; i < WAVEC_HW_INT_COUNT; i++)
    CHECKF(i < 18 && strcmp(hw_names[i], hw[i]) == 0, "hw int %d is %s", i,
           hw_names[i]);
}

static void version_number(void) {
  CHECK(WAVEC_VERSION_NUMBER == WAVEC_VERSION_MAJOR * 10000 +
                                    WAVEC_VERSION_MINOR * 100 +
                                    WAVEC_VERSION_PATCH);
  CHECK(WAVEC_VERSION_MINOR < 100 && WAVEC_VERSION_PATCH < 100);
  char s[32];
  snprintf(s, sizeof s, "%d.%d.%d", WAVEC_VERSION_MAJOR, WAVEC_VERSION_MINOR,
           WAVEC_VERSION_PATCH);
  CHECKF(strcmp(s, WAVEC_VERSION_STRING) == 0, "%s vs %s", s,
         WAVEC_VERSION_STRING);
  CHECK(strcmp(wavec_version(), WAVEC_VERSION_STRING) == 0);
  CHECK(wavec_version_number() == WAVEC_VERSION_NUMBER);
}

/* Offsets and sizes of the public structs on LP64 (x86-64, aarch64). */
static void struct_layout(void) {
  if (sizeof(void *) != 8 || sizeof(long) != 8) {
    printf("  struct layout: pinned for LP64 only\n");
    CHECK(offsetof(wavec_options, size) == 0);
    return;
  }
  struct {
    const char *what;
    size_t got, want;
  } l[] = {
      {"sizeof(wavec_loc)", sizeof(wavec_loc), 16},
      {"offsetof(wavec_loc, line)", offsetof(wavec_loc, line), 8},
      {"offsetof(wavec_loc, col)", offsetof(wavec_loc, col), 12},
      {"sizeof(wavec_diag_info)", sizeof(wavec_diag_info), 40},
      {"offsetof(wavec_diag_info, code)", offsetof(wavec_diag_info, code), 4},
      {"offsetof(wavec_diag_info, message)", offsetof(wavec_diag_info, message),
       8},
      {"offsetof(wavec_diag_info, loc)", offsetof(wavec_diag_info, loc), 16},
      {"offsetof(wavec_diag_info, offset)", offsetof(wavec_diag_info, offset),
       32},
      {"sizeof(wavec_options)", sizeof(wavec_options), 64},
      {"offsetof(wavec_options, size)", offsetof(wavec_options, size), 0},
      {"offsetof(wavec_options, print_after)",
       offsetof(wavec_options, print_after), 8},
      {"offsetof(wavec_options, dump)", offsetof(wavec_options, dump), 16},
      {"offsetof(wavec_options, dump_ud)", offsetof(wavec_options, dump_ud),
       24},
      {"offsetof(wavec_options, check_only)",
       offsetof(wavec_options, check_only), 32},
      {"offsetof(wavec_options, max_steps)",
       offsetof(wavec_options, max_steps), 40},
      {"offsetof(wavec_options, progress)",
       offsetof(wavec_options, progress), 48},
      {"offsetof(wavec_options, progress_ud)",
       offsetof(wavec_options, progress_ud), 56},
      {"sizeof(wavec_arg_info)", sizeof(wavec_arg_info), 112},
      {"offsetof(wavec_arg_info, dtype)", offsetof(wavec_arg_info, dtype), 8},
      {"offsetof(wavec_arg_info, ndims)", offsetof(wavec_arg_info, ndims), 16},
      {"offsetof(wavec_arg_info, shape)", offsetof(wavec_arg_info, shape), 24},
      {"offsetof(wavec_arg_info, elems)", offsetof(wavec_arg_info, elems), 88},
      {"offsetof(wavec_arg_info, bytes)", offsetof(wavec_arg_info, bytes), 96},
      {"offsetof(wavec_arg_info, is_output)",
       offsetof(wavec_arg_info, is_output), 104},
      /* 0.5 renamed swizzle_128b (1: 128 bytes) to swizzle (its bytes) in
       * the same place */
      {"sizeof(wavec_tensor_map_info)", sizeof(wavec_tensor_map_info), 56},
      {"offsetof(wavec_tensor_map_info, box)",
       offsetof(wavec_tensor_map_info, box), 16},
      {"offsetof(wavec_tensor_map_info, swizzle)",
       offsetof(wavec_tensor_map_info, swizzle), 48},
  };
  for (size_t i = 0; i < sizeof l / sizeof *l; i++)
    CHECKF(l[i].got == l[i].want, "%s is %zu, pinned at %zu", l[i].what,
           l[i].got, l[i].want);
  wavec_arg_info a;
  CHECK(sizeof a.shape / sizeof a.shape[0] == WAVEC_MAX_DIMS);
}

/* ---- wavec_options.size ----------------------------------------------------
 */
static const char gemm[] =
    "kernel g(a: Memory[M, K, f16], b: Memory[N, K, f16], "
    "c: Memory[M, N, f32]) {\n"
    "  constraints { workgroup(M, 32, 0)\n workgroup(N, 32, 1)\n"
    "    tiling(K, 16)\n wave(M, 16)\n wave(N, 16)\n"
    "    hardware(threads_per_wave = 32, mma = F32_16x8x16_F16) }\n"
    "  c_reg = Register[M, N, f32](0.0)\n"
    "  acc = iterate(K, acc = c_reg) { yield mma(read(a), read(b), acc) }\n"
    "  write(acc, c)\n"
    "}\n";

/* A caller's options: `bytes` of opt, then `extra` bytes of `fill` (a newer
 * header's fields). Returns the status; *passes: how many passes ran. */
static wavec_status compile_with(const wavec_options *opt, size_t size,
                                 size_t extra, unsigned char fill,
                                 size_t *passes, char *msg, size_t msglen) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_define_int(ctx, "M", 64);
  wavec_define_int(ctx, "N", 64);
  wavec_define_int(ctx, "K", 32);
  wavec_status st = wavec_parse(ctx, "g.wave", gemm, sizeof gemm - 1);
  CHECKF(st == WAVEC_OK, "%s", wavec_errmsg(ctx));
  unsigned char buf[sizeof(wavec_options) + 64];
  memset(buf, 0, sizeof buf);
  memcpy(buf, opt, sizeof *opt);
  memset(buf + sizeof *opt, fill, extra);
  wavec_options *o = (wavec_options *)buf;
  o->size = size;
  st = wavec_compile(wavec_kernel_get(ctx, 0), o);
  *passes = wavec_time_count(ctx) - 1; /* entry 0 is parsing */
  snprintf(msg, msglen, "%s", wavec_errmsg(ctx));
  wavec_ctx_free(ctx);
  return st;
}

static void options_size(void) {
  wavec_options o = WAVEC_OPTIONS_INIT;
  CHECK(o.size == sizeof(wavec_options) && o.print_after == 0 && !o.dump &&
        !o.dump_ud && !o.check_only && !o.max_steps && !o.progress &&
        !o.progress_ud);
  o.check_only = 1;
  size_t all, n;
  char msg[512];
  /* NULL: the defaults, every pass */
  {
    wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
    wavec_define_int(ctx, "M", 64);
    wavec_define_int(ctx, "N", 64);
    wavec_define_int(ctx, "K", 32);
    CHECK(wavec_parse(ctx, "g.wave", gemm, sizeof gemm - 1) == WAVEC_OK);
    CHECK(wavec_compile(wavec_kernel_get(ctx, 0), NULL) == WAVEC_OK);
    all = wavec_time_count(ctx) - 1;
    wavec_ctx_free(ctx);
  }
  CHECK(all > 1);
  /* this header's size: check_only is read */
  CHECK(compile_with(&o, sizeof o, 0, 0, &n, msg, sizeof msg) == WAVEC_OK);
  CHECKF(n == 1, "%zu passes ran with check_only", n);
  /* an older caller whose options end before check_only: it is not read */
  CHECK(compile_with(&o, offsetof(wavec_options, check_only), 0, 0, &n, msg,
                     sizeof msg) == WAVEC_OK);
  CHECKF(n == all, "%zu passes of %zu ran: check_only was read past size", n,
         all);
  /* a newer caller: unknown fields 0 are fine, one set is refused */
  CHECK(compile_with(&o, sizeof o + 16, 16, 0, &n, msg, sizeof msg) ==
        WAVEC_OK);
  CHECK(n == 1);
  CHECK(compile_with(&o, sizeof o + 16, 16, 1, &n, msg, sizeof msg) ==
        WAVEC_ERR_INVALID);
  CHECKF(strstr(msg, "g.wave:1:") && strstr(msg, "a field past them is set"),
         "%s", msg);
  /* size 0: the caller forgot it */
  CHECK(compile_with(&o, 0, 0, 0, &n, msg, sizeof msg) == WAVEC_ERR_INVALID);
  CHECKF(strstr(msg, "g.wave:1:") &&
             strstr(msg, "set it to sizeof(wavec_options)"),
         "%s", msg);
}

/* The functions that take an index return a wavec_status. */
static void indexed_getters(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  wavec_define_int(ctx, "M", 64);
  wavec_define_int(ctx, "N", 64);
  wavec_define_int(ctx, "K", 32);
  CHECK(wavec_parse(ctx, "g.wave", gemm, sizeof gemm - 1) == WAVEC_OK);
  wavec_kernel *k = wavec_kernel_get(ctx, 0);
  CHECK(wavec_compile(k, NULL) == WAVEC_OK);
  wavec_arg_info a;
  CHECK(wavec_arg_count(k) == 3);
  CHECK(wavec_arg_info_get(k, 2, &a) == WAVEC_OK && a.ndims == 2 &&
        a.shape[0] == 64 && a.is_output);
  CHECK(wavec_arg_info_get(k, 3, &a) == WAVEC_ERR_INVALID);
  const char *name;
  uint64_t ns;
  size_t nt = wavec_time_count(ctx);
  CHECK(nt > 1 && wavec_time_get(ctx, nt - 1, &name, &ns) == WAVEC_OK);
  CHECK(wavec_time_get(ctx, nt, &name, &ns) == WAVEC_ERR_INVALID);
  wavec_diag_info d;
  CHECK(wavec_diag_count(ctx) == 0);
  CHECK(wavec_diag(ctx, 0, &d) == WAVEC_ERR_INVALID);
  wavec_ctx_free(ctx);
}

int main(void) {
  RUN(values_are_pinned);
  RUN(tables_are_pinned_and_dense);
  RUN(names_are_pinned);
  RUN(version_number);
  RUN(struct_layout);
  RUN(options_size);
  RUN(indexed_getters);
  CHECK_EXIT();
}
