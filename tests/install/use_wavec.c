/* A user of an installed wavec: only <wavec.h> and -lwavec. The build
 * group of tests/run.sh installs wavec into a temporary prefix, then
 * compiles and links this program against the installed header and
 * libraries (shared and static) and runs it. It compiles a GEMM from
 * source to PTX through the public API and checks what came back; exit
 * status 0 when everything held, else 1 with the reason. */
#include <stdio.h>
#include <string.h>

#include <wavec.h>

static const char src[] =
    "kernel gemm(a: Memory[M, K, f16], b: Memory[N, K, f16],\n"
    "            c: Memory[M, N, f32]) {\n"
    "    constraints {\n"
    "        workgroup(M, 64, 0)\n"
    "        workgroup(N, 64, 1)\n"
    "        tiling(K, 32)\n"
    "        wave(M, 32)\n"
    "        wave(N, 32)\n"
    "        hardware(threads_per_wave = 32, mma = F32_16x8x16_F16)\n"
    "    }\n"
    "    c_reg = Register[M, N, f32](0.0)\n"
    "    acc = iterate(K, acc = c_reg) {\n"
    "        yield mma(read(a), read(b), acc)\n"
    "    }\n"
    "    write(acc, c)\n"
    "}\n";

static int fail(wavec_ctx *ctx, const char *what) {
  printf("FAIL %s: %s\n", what, ctx ? wavec_errmsg(ctx) : "");
  wavec_ctx_free(ctx);
  return 1;
}

int main(void) {
  if (strcmp(wavec_version(), WAVEC_VERSION_STRING) != 0) {
    printf("FAIL the library is %s, the header %s\n", wavec_version(),
           WAVEC_VERSION_STRING);
    return 1;
  }
  wavec_ctx *ctx = wavec_ctx_new(NULL, NULL);
  if (!ctx)
    return fail(NULL, "wavec_ctx_new");
  if (wavec_define_int(ctx, "M", 128) != WAVEC_OK ||
      wavec_define_int(ctx, "N", 128) != WAVEC_OK ||
      wavec_define_int(ctx, "K", 64) != WAVEC_OK)
    return fail(ctx, "wavec_define_int");
  if (wavec_parse(ctx, "gemm.wave", src, sizeof src - 1) != WAVEC_OK)
    return fail(ctx, "wavec_parse");
  wavec_kernel *k = wavec_kernel_find(ctx, "gemm");
  if (!k || wavec_compile(k, NULL) != WAVEC_OK)
    return fail(ctx, "wavec_compile");
  const char *ptx;
  size_t len;
  if (wavec_emit_ptx(k, "sm_80", &ptx, &len) != WAVEC_OK)
    return fail(ctx, "wavec_emit_ptx");
  if (len != strlen(ptx) || !strstr(ptx, ".entry gemm") ||
      !strstr(ptx, "mma.sync"))
    return fail(ctx, "the PTX has no .entry gemm with mma.sync");
  /* an error comes back as a status and a diagnostic, not an exit */
  if (wavec_parse(ctx, "bad.wave", "kernel (", 8) != WAVEC_ERR_SYNTAX ||
      !strstr(wavec_errmsg(ctx), "bad.wave:1:"))
    return fail(ctx, "a syntax error");
  printf("ok wavec %s: gemm, %zu bytes of PTX\n", wavec_version(), len);
  wavec_ctx_free(ctx);
  return 0;
}
