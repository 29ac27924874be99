/* Builds the GEMM of examples/gemm.wave through the C builder API, without
 * any text, compiles it through `check`, and prints the typed graph. The
 * test suite checks that this graph is the one the parser builds. */
#include <stdio.h>

#include "wavec.h"

/* Source locations are optional; giving the C line makes diagnostics point
 * into this file. */
#define HERE ((wavec_loc){__FILE__, __LINE__, 1})

int main(void) {
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  if (!ctx)
    return 2;
  wavec_sym M = wavec_symbol(ctx, "M"), N = wavec_symbol(ctx, "N"),
            K = wavec_symbol(ctx, "K");
  wavec_sym BM = wavec_symbol(ctx, "BLOCK_M"), BN = wavec_symbol(ctx, "BLOCK_N"),
            BK = wavec_symbol(ctx, "BLOCK_K");

  wavec_kernel *k = wavec_kernel_begin(ctx, "gemm", HERE);
  wavec_value a = wavec_arg(k, "a", 2, (wavec_sym[]){M, K}, WAVEC_F16, 0, HERE);
  wavec_value b = wavec_arg(k, "b", 2, (wavec_sym[]){N, K}, WAVEC_F16, 0, HERE);
  wavec_value c = wavec_arg(k, "c", 2, (wavec_sym[]){M, N}, WAVEC_F32, 0, HERE);

  wavec_expr two = wavec_expr_int(k, 2);
  wavec_workgroup(k, M, wavec_expr_sym(k, BM), 0, HERE);
  wavec_workgroup(k, N, wavec_expr_sym(k, BN), 1, HERE);
  wavec_tiling(k, K, wavec_expr_sym(k, BK), HERE);
  wavec_wave(k, M, wavec_expr_binary(k, WAVEC_EXPR_DIV, wavec_expr_sym(k, BM), two, HERE), HERE);
  wavec_wave(k, N, wavec_expr_binary(k, WAVEC_EXPR_DIV, wavec_expr_sym(k, BN), two, HERE), HERE);
  wavec_threads_per_wave(k, wavec_expr_int(k, 32), HERE);
  wavec_hardware_mma(k, WAVEC_MMA_F32_16x8x16_F16, HERE);
  wavec_default_int(k, BM, 64, HERE);
  wavec_default_int(k, BN, 64, HERE);
  wavec_default_int(k, BK, 32, HERE);

  wavec_value zero = wavec_scalar(k, 0.0, HERE);
  wavec_value c_reg = wavec_register(k, 2, (wavec_sym[]){M, N}, WAVEC_F32, zero, HERE);
  wavec_value_name(k, c_reg, "c_reg");
  wavec_loop loop = wavec_loop_begin(k, K, 1, &c_reg, HERE);
  wavec_value acc = wavec_loop_carried(k, loop, 0);
  wavec_value_name(k, acc, "acc");
  wavec_value a_reg = wavec_read(k, a, 0, 0, HERE);
  wavec_value_name(k, a_reg, "a_reg");
  wavec_value b_reg = wavec_read(k, b, 0, 0, HERE);
  wavec_value_name(k, b_reg, "b_reg");
  wavec_value next = wavec_mma(k, a_reg, b_reg, acc, HERE);
  wavec_loop_yield(k, loop, 1, &next, HERE);
  wavec_value result = wavec_loop_result(k, loop, 0);
  wavec_value_name(k, result, "acc");
  wavec_write(k, result, c, 0, 0, HERE);
  wavec_status st = wavec_kernel_end(k);

  wavec_options opt = WAVEC_OPTIONS_INIT;
  opt.check_only = 1;
  if (st == WAVEC_OK)
    st = wavec_compile(k, &opt);
  if (st != WAVEC_OK) {
    fputs(wavec_errmsg(ctx), stderr);
    wavec_ctx_free(ctx);
    return 1;
  }
  fputs(wavec_kernel_dump(k), stdout);
  wavec_ctx_free(ctx);
  return 0;
}
