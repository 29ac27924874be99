/* A harness for running example kernels through the C API against the
 * float64 references: compile with sizes and hardware, fill inputs with
 * seeded random data of the argument's type, run (simulator or GPU), read
 * outputs back as float64. Used by the numerical tests and the demo. */
#ifndef WV_TESTS_KCASE_H
#define WV_TESTS_KCASE_H

#include <stdbool.h>
#include <stdint.h>

#include "ref.h"
#include "wavec.h"

typedef struct kc_hw {
  const char *name, *threads, *mma;
} kc_hw;
extern const kc_hw kc_nvidia, kc_mfma;

typedef struct kcase {
  wavec_ctx *ctx;
  wavec_kernel *k;
  void *buf[16];
  wavec_arg_info info[16];
  size_t n;
  double compile_ms;
  char err[4096]; /* the message of the first failure */
} kcase;

/* Compiles `kernel` of `file` with defines "SYM=V" (NULL-terminated; V with
 * a '.', an exponent or inf is a float; the names of WAVEC_HW_INTS, such as
 * stages=, are hardware entries) and
 * hardware hw (NULL: the kernel's own). false (with c->err) on failure. */
bool kc_open(kcase *c, const char *file, const char *kernel, const kc_hw *hw,
             const char *const *defs);
void kc_close(kcase *c);
size_t kc_arg(kcase *c, const char *name);
/* Random input in [-1, 1) of the argument's type; returns its values
 * (malloc'd, exactly what the kernel sees). */
double *kc_input(kcase *c, const char *name, uint64_t *rng);
/* Sets an input from x, rounding x to the argument's type in place. */
void kc_set(kcase *c, const char *name, double *x);
/* An output as float64 (malloc'd). */
double *kc_output(kcase *c, const char *name);
/* Runs in the simulator; false (with c->err) on failure. */
bool kc_simulate(kcase *c);
/* Relative L2 error of an output against ref. */
double kc_rel_err(kcase *c, const char *name, const double *ref);
/* Does some remark of k hold `text`? */
bool kc_has_remark(wavec_kernel *k, const char *text);

/* A GEMM c[M, N] = a[M, K] b[N, K]^T of `kernel` compiled at M, N, K with
 * `knobs` ("SYM=V", NULL-ended, as kc_open takes them); `what` gets its
 * name, sizes and knobs for messages. */
bool kc_gemm_open(kcase *c, const char *file, const char *kernel, int M,
                  int N, int K, const char *const *knobs, char what[256]);
/* Its c against float64 of random a and b: the relative L2 error, or -1
 * (with c->err) where the simulator refused to run it. */
double kc_gemm_err(kcase *c, int M, int N, int K, uint64_t *rng);
/* The same with the operands stored another way: a as [K, M] where a_km,
 * b as [K, N] where b_kn (c = a b either way). */
double kc_gemm_err_as(kcase *c, int M, int N, int K, bool a_km, bool b_kn,
                      uint64_t *rng);

#endif
