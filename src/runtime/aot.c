/* Ahead of time: a compiled kernel as one C file and its header
 * (wavec_emit_c). The C file holds the kernel's PTX (and its cubin when
 * ptxas is there) and a typed launcher that loads the module once per CUDA
 * context and launches it; it needs only cuda.h to compile and the driver
 * (-lcuda) to link. The emitted text is deterministic. */
#include "ir/ir.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "tir/tir.h"

/* The launcher's C names of the kernel's arguments and run-time sizes.
 * A .wave identifier is any [A-Za-z_][A-Za-z0-9_]*, so a name is kept only
 * when it cannot clash with what the C file and its header declare, use or
 * include: a word C (C17, C23, GNU) or C++ reserves (the header is
 * included from C++ too), an identifier the file declares or uses (the
 * launcher's locals and parameter `stream`, the types, functions and
 * constants it names, its own statics NAME_*), a name of the namespaces of
 * cuda.h, stdint.h, stdatomic.h, sched.h and the headers they include
 * (their macros would replace it), or the C name of an earlier argument or
 * size. A name in one of those namespaces gets "wv_" put before it (no
 * header names anything so); then, while it still clashes, a '_' is
 * appended. The same C name serves the prototype, the header's comments
 * and the body. */
static const char *const reserved[] = {
    /* C17, C23 and GNU C keywords (the _Xxx ones are a namespace below) */
    "alignas", "alignof", "asm", "auto", "bool", "break", "case", "char",
    "const", "constexpr", "continue", "default", "do", "double", "else", "enum",
    "extern", "false", "float", "for", "goto", "if", "inline", "int", "long",
    "nullptr", "register", "restrict", "return", "short", "signed", "sizeof",
    "static", "static_assert", "struct", "switch", "thread_local", "true",
    "typedef", "typeof", "typeof_unqual", "union", "unsigned", "void",
    "volatile", "while",
    /* C++ keywords and alternative tokens */
    "and", "and_eq", "bitand", "bitor", "catch", "char8_t", "char16_t",
    "char32_t", "class", "co_await", "co_return", "co_yield", "compl",
    "concept", "const_cast", "consteval", "constinit", "decltype", "delete",
    "dynamic_cast", "explicit", "export", "friend", "mutable", "namespace",
    "new", "noexcept", "not", "not_eq", "operator", "or", "or_eq", "private",
    "protected", "public", "reflexpr", "reinterpret_cast", "requires",
    "static_cast", "template", "this", "throw", "try", "typeid", "typename",
    "using", "virtual", "wchar_t", "xor", "xor_eq",
    /* the launcher's parameter and locals, and the C library names it uses
     * (the cuda.h, stdatomic.h and sched.h ones are namespaces below) */
    "stream", "f", "st", "r", "args", "tmap", "tr", "dim", "stride", "box",
    "estride", "ctx", "i", "mod", "fn", "out", "uintptr_t",
    /* object-like macros of the headers cuda.h includes (stdlib.h) and of
     * the compiler (gnu modes), outside the namespaces below */
    "BIG_ENDIAN", "BYTE_ORDER", "EXIT_FAILURE", "EXIT_SUCCESS", "FD_SETSIZE",
    "LITTLE_ENDIAN", "MB_CUR_MAX", "NFDBITS", "NULL", "PDP_ENDIAN",
    "PTRDIFF_MAX", "PTRDIFF_MIN", "RAND_MAX", "RESOURCE_ABI_EXTERNAL_BYTES",
    "RESOURCE_ABI_VERSION", "SIG_ATOMIC_MAX", "SIG_ATOMIC_MIN", "SIZE_MAX",
    "WCHAR_MAX", "WCHAR_MIN", "WCONTINUED", "WEXITED", "WINT_MAX", "WINT_MIN",
    "WNOHANG", "WNOWAIT", "WSTOPPED", "WUNTRACED", "errno", "i386", "linux",
    "unix"};

/* The file's own statics and functions: NAME_ and these. */
static const char *const own[] = {"ptx",  "cubin",  "mods",     "nmods",
                                  "lock", "result", "fail",     "function",
                                  "load", "launch", "cu_result"};

/* Whether s is in a namespace of the headers: the implementation's (_X,
 * __x), cuda.h's (CU..., cuX..., cuuint...), stdint.h's (INTn_MAX,
 * [u]intN_t, ...), stdatomic.h's, sched.h's or wavec.h's. */
static bool in_namespace(const char *s) {
  static const char *const prefixes[] = {
      "_",       "CU",           "cuuint",
      "INT",     "UINT",         "atomic_",
      "ATOMIC_", "memory_order", "kill_dependency",
      "sched_",  "SCHED_",       "CPU_",
      "CLONE_",  "WAVEC_",       "wavec_"};
  for (size_t i = 0; i < WV_ARRAY_LEN(prefixes); i++)
    if (strncmp(s, prefixes[i], strlen(prefixes[i])) == 0)
      return true;
  if (s[0] == 'c' && s[1] == 'u' && s[2] >= 'A' && s[2] <= 'Z')
    return true; /* cuLaunchKernel, cuMemAlloc_v2 */
  /* [u]int[_least|_fast]N_t, [u]intptr_t, [u]intmax_t */
  const char *p = s + (s[0] == 'u');
  if (strncmp(p, "int", 3) != 0)
    return false;
  p += 3;
  if (!strcmp(p, "ptr_t") || !strcmp(p, "max_t"))
    return true;
  if (!strncmp(p, "_least", 6) || !strncmp(p, "_fast", 5))
    p += p[1] == 'l' ? 6 : 5;
  if (*p < '0' || *p > '9')
    return false;
  while (*p >= '0' && *p <= '9')
    p++;
  return !strcmp(p, "_t");
}

static bool clashes(const char *s, const char *fn, const char *const *taken,
                    size_t ntaken) {
  if (in_namespace(s))
    return true;
  for (size_t i = 0; i < WV_ARRAY_LEN(reserved); i++)
    if (!strcmp(s, reserved[i]))
      return true;
  size_t n = strlen(fn);
  if (!strncmp(s, fn, n) && s[n] == '_')
    for (size_t i = 0; i < WV_ARRAY_LEN(own); i++)
      if (!strcmp(s + n + 1, own[i]))
        return true;
  for (size_t i = 0; i < ntaken; i++)
    if (!strcmp(s, taken[i]))
      return true;
  return false;
}

/* A copy of m (sharing all but its arguments and sizes) whose argument and
 * size names are their C names, in the context's arena. */
static wavec_module *c_names(wavec_ctx *ctx, const wavec_module *m,
                             const char *fn) {
  wavec_module *cm = wv_alloc(ctx, sizeof *cm);
  *cm = *m;
  cm->args = wv_alloc(ctx, (m->nargs + 1) * sizeof *cm->args);
  cm->sizes = wv_alloc(ctx, (m->nsizes + 1) * sizeof *cm->sizes);
  const char **taken =
      wv_alloc(ctx, (m->nargs + m->nsizes + 1) * sizeof *taken);
  size_t n = 0;
  for (uint32_t i = 0; i < m->nargs + m->nsizes; i++) {
    const char *name =
        i < m->nargs ? m->args[i].name : m->sizes[i - m->nargs].name;
    wv_buf b;
    wv_buf_init(&b, ctx);
    if (in_namespace(name))
      wv_buf_puts(&b, "wv_");
    wv_buf_puts(&b, name);
    while (clashes(wv_buf_str(&b), fn, taken, n))
      wv_buf_puts(&b, "_");
    taken[n++] = wv_buf_str(&b);
    if (i < m->nargs) {
      cm->args[i] = m->args[i];
      cm->args[i].name = taken[n - 1];
    } else {
      cm->sizes[i - m->nargs] = m->sizes[i - m->nargs];
      cm->sizes[i - m->nargs].name = taken[n - 1];
    }
  }
  return cm;
}

static void c_name(wv_buf *b, const char *name) {
  wv_buf_puts(b, name);
}

static void c_bytes(wv_buf *b, const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    wv_buf_printf(b, "%s0x%02x,", i % 16 ? " " : "\n    ", p[i]);
  wv_buf_puts(b, "\n");
}

/* Dim d of argument i as C: its size, or the launcher's parameter of a
 * run-time size (cast to `cast`, when not NULL). */
static void dim_c(wv_buf *b, const wavec_module *m, uint32_t i, size_t d,
                  const char *cast) {
  if (!m->dyn[i][d]) {
    wv_buf_printf(b, "%lldu", (long long)m->args[i].shape[d]);
    return;
  }
  if (cast)
    wv_buf_printf(b, "(%s)", cast);
  c_name(b, m->sizes[m->dyn[i][d] - 1].name);
}

static void arg_doc(wv_buf *b, const wavec_module *m, uint32_t i) {
  const wavec_arg_info *a = &m->args[i];
  wv_buf_printf(b, " *   %-10s %s [", a->name, wavec_dtype_name(a->dtype));
  for (size_t d = 0; d < a->ndims; d++) {
    wv_buf_puts(b, d ? ", " : "");
    if (m->dyn[i][d])
      wv_buf_puts(b, m->sizes[m->dyn[i][d] - 1].name);
    else
      wv_buf_printf(b, "%lld", (long long)a->shape[d]);
  }
  wv_buf_printf(b, "]%s", a->is_output ? ", written" : "");
  if (m->align[i] > (uint32_t)((wv_dtypes[a->dtype].bits + 7) / 8))
    wv_buf_printf(b, ", %u-byte aligned", m->align[i]);
  wv_buf_puts(b, "\n");
}

/* The launcher's parameters: the stream, a pointer per argument, then a
 * uint32_t per run-time size (dynamic dim), named after it. */
static void params(wv_buf *b, const wavec_module *m) {
  wv_buf_puts(b, "CUstream stream");
  for (uint32_t i = 0; i < m->nargs; i++) {
    wv_buf_puts(b, ", CUdeviceptr ");
    c_name(b, m->args[i].name);
  }
  for (uint32_t i = 0; i < m->nsizes; i++) {
    wv_buf_puts(b, ", uint32_t ");
    c_name(b, m->sizes[i].name);
  }
}

/* The workgroup tiles along axis a as C (unsigned long long) or, doc, as
 * prose: a fixed number, or ceil(SIZE / TILE) of a run-time size. */
static void tiles_c(wv_buf *b, const wavec_module *m, int a, bool doc) {
  if (!m->grid_size[a]) {
    wv_buf_printf(b, doc ? "%lld" : "%lldull", (long long)m->tiles[a]);
    return;
  }
  const char *name = m->sizes[m->grid_size[a] - 1].name;
  long long t = (long long)m->grid_tile[a];
  if (doc) {
    wv_buf_printf(b, "ceil(%s / %lld)", name, t);
    return;
  }
  wv_buf_puts(b, "((");
  c_name(b, name);
  wv_buf_printf(b, " + %lldull - 1) / %lldull)", t, t);
}

/* The grid along axis a as C (or, doc, as prose): its tiles, or with
 * persistent tiles and run-time sizes min(all the tiles, the most
 * workgroups) along x. */
static void grid_c(wv_buf *b, const wavec_module *m, int a, bool doc) {
  bool dyn = m->grid_size[0] || m->grid_size[1] || m->grid_size[2];
  if (!m->persistent || !dyn) {
    if (!m->grid_size[a]) {
      wv_buf_printf(b, doc ? "%u" : "%uu", m->grid[a]);
    } else {
      wv_buf_puts(b, doc ? "" : "(unsigned)");
      tiles_c(b, m, a, doc);
    }
    return;
  }
  if (a) {
    wv_buf_puts(b, doc ? "1" : "1u");
    return;
  }
  long long most = (long long)m->persistent;
  wv_buf_puts(b, doc ? "min(" : "(unsigned)(");
  for (int rep = 0; rep < (doc ? 1 : 2); rep++) {
    for (int d = 0; d < 3; d++) {
      wv_buf_puts(b, d ? (doc ? " x " : " * ") : "");
      tiles_c(b, m, d, doc);
    }
    if (!rep && !doc)
      wv_buf_printf(b, " < %lldull ? ", most);
  }
  wv_buf_printf(b, doc ? ", %lld)" : " : %lldull)", most);
}

/* The launcher's refusal of run-time sizes whose grid no launch can take
 * (tir_launch_grid): more than 65535 workgroups along y or z (x takes any
 * size below 2^31), or more than 2^31-1 persistent tiles. Sizes are
 * below 2^31 here, so no product overflows. */
static void grid_check_c(wv_buf *c, const wavec_module *m, const char *fn) {
  bool dyn = m->grid_size[0] || m->grid_size[1] || m->grid_size[2];
  if (!dyn)
    return;
  if (m->persistent) {
    wv_buf_puts(c, "  if (");
    for (int n = 2; n <= 3; n++) {
      for (int a = 0; a < n; a++) {
        wv_buf_puts(c, a ? " * " : "");
        tiles_c(c, m, a, false);
      }
      wv_buf_puts(c, n == 2 ? " > 2147483647ull ||\n      " : " > 2147483647ull");
    }
  } else {
    bool any = false;
    for (int a = 1; a < 3; a++)
      if (m->grid_size[a]) {
        wv_buf_puts(c, any ? " || " : "  if (");
        tiles_c(c, m, a, false);
        wv_buf_puts(c, " > 65535ull");
        any = true;
      }
    if (!any)
      return;
  }
  wv_buf_printf(c,
                ") {\n    %s_result = CUDA_ERROR_INVALID_VALUE;\n"
                "    return WAVEC_ERR_UNSUPPORTED;\n  }\n",
                fn);
}

static void header(wv_buf *h, const wavec_module *m, const char *fn,
                   const char *guard, const char *what) {
  wv_buf_printf(
      h,
      "/* Generated by wavec %s: %s.\n"
      " * The launcher of kernel '%s' for %s; its C file needs\n"
      " * cuda.h to compile and the CUDA driver (-lcuda) to link. */\n"
      "#ifndef %s\n#define %s\n\n#include <cuda.h>\n#include <stdint.h>\n\n"
      "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
      WAVEC_VERSION_STRING, what, m->kernel, m->target, guard, guard);
  /* wavec_status as wavec.h declares it, unless it is already declared */
  wv_buf_puts(h,
              "#if !defined(WAVEC_H) && !defined(WAVEC_STATUS_DECLARED)\n"
              "#define WAVEC_STATUS_DECLARED\ntypedef enum wavec_status {\n");
#define X(e, num, s) wv_buf_printf(h, "  %s = %d, /* %s */\n", #e, num, s);
  WAVEC_STATUSES(X)
#undef X
  wv_buf_puts(h, "} wavec_status;\n#endif\n\n");
  wv_buf_printf(
      h,
      "/* Loads the module into the calling thread's current CUDA context\n"
      " * (once per context; %s_launch does it on its first call there:\n"
      " * call this first where that must not happen, e.g. before a CUDA\n"
      " * graph capture). */\n"
      "wavec_status %s_load(void);\n\n",
      fn, fn);
  wv_buf_printf(h,
                "/* Launches '%s' asynchronously on stream (0: the default\n"
                " * stream) of the current context, with grid [",
                m->kernel);
  for (int a = 0; a < 3; a++) {
    wv_buf_puts(h, a ? ", " : "");
    grid_c(h, m, a, true);
  }
  wv_buf_printf(
      h,
      "], block\n * [%u, %u, %u] and %llu bytes of shared memory. Each "
      "argument is\n * a device pointer to a dense row-major tensor:\n",
      m->block[0], m->block[1], m->block[2], (unsigned long long)m->smem);
  for (uint32_t i = 0; i < m->nargs; i++)
    arg_doc(h, m, i);
  if (m->nsizes) {
    wv_buf_puts(h, " * and the run-time sizes (dynamic dims) follow them:");
    for (uint32_t i = 0; i < m->nsizes; i++) {
      wv_buf_printf(h, " %s (at most %lld", m->sizes[i].name,
                    (long long)m->sizes[i].most);
      if (m->sizes[i].multiple > 1)
        wv_buf_printf(h, ", a multiple of %lld", (long long)m->sizes[i].multiple);
      wv_buf_puts(h, i + 1 < m->nsizes ? ")," : ");\n * WAVEC_ERR_INVALID for a size of 0, past its most or not such a multiple.\n");
    }
    wv_buf_puts(h, m->persistent
                       ? " * WAVEC_ERR_UNSUPPORTED for sizes giving more than 2^31-1 tiles.\n"
                       : " * WAVEC_ERR_UNSUPPORTED for sizes giving more workgroups than a\n"
                         " * launch allows (65535 along y and z).\n");
  }
  wv_buf_printf(h,
                " * WAVEC_ERR_RUNTIME when loading or launching fails\n"
                " * (%s_cu_result() says why), WAVEC_ERR_INVALID for a pointer\n"
                " * less aligned than its line says or without a\n"
                " * current context. */\n"
                "wavec_status %s_launch(",
                fn, fn);
  params(h, m);
  wv_buf_printf(
      h,
      ");\n\n/* The driver's result of the calling thread's last failed\n"
      " * %s_load or %s_launch (CUDA_SUCCESS when none failed). */\n"
      "CUresult %s_cu_result(void);\n\n"
      "#ifdef __cplusplus\n}\n#endif\n#endif\n",
      fn, fn, fn);
}

/* The launcher's tensor maps (wavec_tensor_map_info), built over the
 * argument pointers at every launch as the library builds them: dims
 * innermost first, byte strides of a dense row-major tensor, element
 * strides 1, the swizzle (128B, 64B, 32B or none), L2 promotion 256B,
 * zeros out of bounds. */
static void tensor_maps(wv_buf *c, const wavec_module *m, const char *fn) {
  static const char *const cu_dtype[WAVEC_DTYPE_COUNT] = {
      [WAVEC_F16] = "FLOAT16", [WAVEC_BF16] = "BFLOAT16",
      [WAVEC_F32] = "FLOAT32", [WAVEC_I32] = "INT32", [WAVEC_I1] = "UINT8",
      [WAVEC_F8E4M3] = "UINT8", [WAVEC_F8E5M2] = "UINT8", [WAVEC_I8] = "UINT8"};
  if (!m->ntmaps)
    return;
  wv_buf_printf(c, "  CUtensorMap tmap[%u];\n  CUresult tr;\n", m->ntmaps);
  for (uint32_t i = 0; i < m->ntmaps; i++) {
    const wavec_tensor_map_info *t = &m->tmaps[i];
    const wavec_arg_info *a = &m->args[t->arg];
    size_t r = t->ndims;
    uint32_t ai = (uint32_t)t->arg;
    wv_buf dim, stride, box, es, bytes;
    wv_buf_init(&dim, c->ctx);
    wv_buf_init(&stride, c->ctx);
    wv_buf_init(&box, c->ctx);
    wv_buf_init(&es, c->ctx);
    /* a byte stride: a number while the dims inside it are fixed, then C
     * over the run-time sizes */
    wv_buf_init(&bytes, c->ctx);
    unsigned long long nbytes =
        (unsigned long long)(wv_dtypes[a->dtype].bits + 7) / 8;
    for (size_t j = 0; j < r; j++) { /* innermost first */
      size_t d = r - 1 - j;
      wv_buf_puts(&dim, j ? ", " : "");
      dim_c(&dim, m, ai, d, "cuuint64_t");
      wv_buf_printf(&box, "%s%uu", j ? ", " : "", t->box[d]);
      wv_buf_printf(&es, "%s1u", j ? ", " : "");
      if (j && bytes.n)
        wv_buf_printf(&stride, "%s%s", j > 1 ? ", " : "", wv_buf_str(&bytes));
      else if (j)
        wv_buf_printf(&stride, "%s%lluu", j > 1 ? ", " : "", nbytes);
      if (bytes.n || m->dyn[ai][d]) {
        if (!bytes.n)
          wv_buf_printf(&bytes, "(cuuint64_t)%lluu", nbytes);
        wv_buf_puts(&bytes, " * ");
        dim_c(&bytes, m, ai, d, NULL);
      } else {
        nbytes *= (unsigned long long)a->shape[d];
      }
    }
    wv_buf_printf(c,
                  "  {\n    const cuuint64_t dim[] = {%s}, stride[] = {%s};\n"
                  "    const cuuint32_t box[] = {%s}, estride[] = {%s};\n"
                  "    tr = cuTensorMapEncodeTiled(&tmap[%u], "
                  "CU_TENSOR_MAP_DATA_TYPE_%s, %zuu, (void *)(uintptr_t)",
                  wv_buf_str(&dim), r > 1 ? wv_buf_str(&stride) : "0",
                  wv_buf_str(&box), wv_buf_str(&es), i, cu_dtype[a->dtype],
                  r);
    c_name(c, a->name);
    wv_buf_printf(c,
                  ", dim, stride, box, estride,\n"
                  "        CU_TENSOR_MAP_INTERLEAVE_NONE, "
                  "CU_TENSOR_MAP_SWIZZLE_%s,\n"
                  "        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "
                  "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);\n"
                  "    if (tr != CUDA_SUCCESS)\n      return %s_fail(tr);\n"
                  "  }\n",
                  (const char *const[]){"NONE", "32B", "64B",
                                        "128B"}[tir_swz_code(t->swizzle)],
                  fn);
  }
}

static void source(wv_buf *c, const wavec_module *m, const char *fn,
                   const char *hname, const char *ptx, size_t ptx_len,
                   const char *what) {
  wv_buf_printf(
      c,
      "/* Generated by wavec %s: %s. */\n"
      "#include \"%s\"\n\n#include <sched.h>\n#include <stdatomic.h>\n#include <stdint.h>\n\n",
      WAVEC_VERSION_STRING, what, hname);
  /* bytes, not a string literal: no limit on a literal's length applies
   * (ISO C asks compilers for 4095 characters) */
  wv_buf_printf(c,
                "/* the PTX (.target %s), NUL-terminated */\n"
                "static const char %s_ptx[%zu] = {",
                m->target, fn, ptx_len + 1);
  c_bytes(c, (const unsigned char *)ptx, ptx_len + 1);
  wv_buf_puts(c, "};\n\n");
  if (m->code_len) {
    wv_buf_printf(c,
                  "/* the cubin of the PTX for %s, by ptxas */\n"
                  "static _Alignas(8) const unsigned char %s_cubin[%zu] = {",
                  m->target, fn, m->code_len);
    c_bytes(c, m->code, m->code_len);
    wv_buf_puts(c, "};\n\n");
  }
  unsigned dyn = m->smem > TIR_PTX_STATIC_SMEM_MAX ? (unsigned)m->smem : 0;
  wv_buf_printf(
      c,
      "/* the module of each context it was loaded into */\n"
      "static struct {\n  CUcontext ctx;\n  CUfunction fn;\n} %s_mods[16];\n"
      "static int %s_nmods;\nstatic atomic_flag %s_lock = ATOMIC_FLAG_INIT;\n"
      "static _Thread_local CUresult %s_result;\n\n"
      "CUresult %s_cu_result(void) { return %s_result; }\n\n",
      fn, fn, fn, fn, fn, fn);
  wv_buf_printf(
      c,
      "static wavec_status %s_fail(CUresult r) {\n"
      "  %s_result = r;\n  return WAVEC_ERR_RUNTIME;\n}\n\n"
      "/* The function in the current context, its module loaded there first:\n"
      " * the cubin where it runs on the device, else the PTX, compiled by "
      "the\n"
      " * driver. */\n"
      "static wavec_status %s_function(CUfunction *out) {\n"
      "  CUcontext ctx = 0;\n  CUresult r = cuCtxGetCurrent(&ctx);\n"
      "  if (r != CUDA_SUCCESS)\n    return %s_fail(r);\n"
      "  if (!ctx) {\n    %s_result = CUDA_ERROR_INVALID_CONTEXT;\n"
      "    return WAVEC_ERR_INVALID;\n  }\n"
      "  while (atomic_flag_test_and_set_explicit(&%s_lock, "
      "memory_order_acquire))\n"
      "    sched_yield();\n"
      "  wavec_status st = WAVEC_OK;\n  int i = 0;\n"
      "  while (i < %s_nmods && %s_mods[i].ctx != ctx)\n    i++;\n"
      "  if (i == %s_nmods) {\n    CUmodule mod = 0;\n    CUfunction fn = 0;\n",
      fn, fn, fn, fn, fn, fn, fn, fn, fn);
  if (m->code_len)
    wv_buf_printf(c,
                  "    r = cuModuleLoadData(&mod, %s_cubin);\n"
                  "    if (r != CUDA_SUCCESS)\n"
                  "      r = cuModuleLoadData(&mod, %s_ptx);\n",
                  fn, fn);
  else
    wv_buf_printf(c, "    r = cuModuleLoadData(&mod, %s_ptx);\n", fn);
  wv_buf_printf(c,
                "    if (r == CUDA_SUCCESS)\n"
                "      r = cuModuleGetFunction(&fn, mod, \"%s\");\n",
                m->entry);
  if (dyn)
    wv_buf_printf(c,
                  "    if (r == CUDA_SUCCESS)\n"
                  "      r = cuFuncSetAttribute(fn, "
                  "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, %u);\n",
                  dyn);
  wv_buf_printf(
      c,
      "    if (r != CUDA_SUCCESS) {\n      if (mod)\n        "
      "cuModuleUnload(mod);\n"
      "      st = %s_fail(r);\n"
      "    } else if (%s_nmods == (int)(sizeof %s_mods / sizeof %s_mods[0])) "
      "{\n"
      "      cuModuleUnload(mod);\n      st = "
      "%s_fail(CUDA_ERROR_OUT_OF_MEMORY);\n"
      "    } else {\n      %s_mods[%s_nmods].ctx = ctx;\n"
      "      %s_mods[%s_nmods++].fn = fn;\n    }\n  }\n"
      "  if (st == WAVEC_OK)\n    *out = %s_mods[i].fn;\n"
      "  atomic_flag_clear_explicit(&%s_lock, memory_order_release);\n"
      "  return st;\n}\n\n",
      fn, fn, fn, fn, fn, fn, fn, fn, fn, fn, fn);
  wv_buf_printf(c,
                "wavec_status %s_load(void) {\n  CUfunction f;\n"
                "  return %s_function(&f);\n}\n\n",
                fn, fn);
  wv_buf_printf(c, "wavec_status %s_launch(", fn);
  params(c, m);
  wv_buf_printf(c,
                ") {\n  CUfunction f;\n  wavec_status st = %s_function(&f);\n"
                "  if (st != WAVEC_OK)\n    return st;\n",
                fn);
  /* the run-time sizes as the kernel states them, each at most its
   * largest value (the index analysis assumes it: below 2^31, less where
   * a tensor has several: docs/LANGUAGE-additions.md) */
  for (uint32_t i = 0; i < m->nsizes; i++) {
    wv_buf_puts(c, "  if (");
    c_name(c, m->sizes[i].name);
    wv_buf_puts(c, " == 0 || ");
    c_name(c, m->sizes[i].name);
    wv_buf_printf(c, " > %lldu", (long long)m->sizes[i].most);
    if (m->sizes[i].multiple > 1) {
      wv_buf_puts(c, " || ");
      c_name(c, m->sizes[i].name);
      wv_buf_printf(c, " %% %lldu", (long long)m->sizes[i].multiple);
    }
    wv_buf_printf(c,
                  ") {\n    %s_result = CUDA_ERROR_INVALID_VALUE;\n"
                  "    return WAVEC_ERR_INVALID;\n  }\n",
                  fn);
  }
  grid_check_c(c, m, fn);
  /* pointers as aligned as the kernel's widest access to them needs (a
   * misaligned one would fault in the kernel) */
  for (uint32_t i = 0; i < m->nargs; i++) {
    if (m->align[i] <= (uint32_t)((wv_dtypes[m->args[i].dtype].bits + 7) / 8))
      continue;
    wv_buf_puts(c, "  if (");
    c_name(c, m->args[i].name);
    wv_buf_printf(c,
                  " %% %uu) {\n    %s_result = CUDA_ERROR_INVALID_VALUE;\n"
                  "    return WAVEC_ERR_INVALID;\n  }\n",
                  m->align[i], fn);
  }
  tensor_maps(c, m, fn);
  wv_buf_puts(c, "  void *args[] = {");
  for (uint32_t i = 0; i < m->nargs; i++) {
    wv_buf_puts(c, i ? ", &" : "&");
    c_name(c, m->args[i].name);
  }
  for (uint32_t i = 0; i < m->ntmaps; i++)
    wv_buf_printf(c, ", &tmap[%u]", i);
  for (uint32_t i = 0; i < m->nsizes; i++) {
    wv_buf_puts(c, ", &");
    c_name(c, m->sizes[i].name);
  }
  if (!m->nargs)
    wv_buf_puts(c, "0");
  wv_buf_puts(c, "};\n  CUresult r = cuLaunchKernel(f, ");
  for (int a = 0; a < 3; a++) {
    grid_c(c, m, a, false);
    wv_buf_puts(c, ", ");
  }
  wv_buf_printf(c,
                "%uu, %uu, %uu, %uu, stream, %s, 0);\n"
                "  return r == CUDA_SUCCESS ? WAVEC_OK : %s_fail(r);\n}\n",
                m->block[0], m->block[1], m->block[2], dyn,
                m->nargs ? "args" : "0", fn);
}

wavec_status wavec_emit_c(wavec_kernel *pk, const char *target, unsigned flags,
                          const char *header_name, const char **c_src,
                          const char **h_src, int *with_cubin) {
  if (!pk || !c_src || !h_src || !header_name)
    return wv_null_param(pk ? pk->k.ctx : NULL, "wavec_emit_c",
                         !c_src ? "c_src" : !h_src ? "h_src"
                                                   : "header_name");
  wv_kernel *k = &pk->k;
  wavec_ctx *ctx = k->ctx;
  if (ctx->status != WAVEC_OK)
    return ctx->status;
  WV_GUARD(ctx, ctx->status);
  if (!k->tir)
    wv_fail(ctx, D_INVALID, k->loc,
            "kernel '%s' is not compiled (call wavec_compile first)", k->name);
  const wv_target *t = wv_target_get(target);
  if (!t || !t->ptx_target)
    wv_fail(ctx, D_INVALID, k->loc,
            "unknown PTX target '%s' (choose sm_80, sm_89, sm_90 or sm_90a)",
            target ? target : "(null)");
  wv_buf ptx;
  wv_buf_init(&ptx, ctx);
  tir_emit_ptx(ctx, k->tir, k->name, k->loc, t, &ptx);
  /* the cubin, through the cache, when ptxas is there */
  bool cubin = wv_ptxas_path(ctx) != NULL;
  wavec_module *m =
      cubin ? wv_load(ctx, k, k->name, t->name, flags | WAVEC_LOAD_PTXAS)
            : wv_module_of(ctx, k, t->name);
  if (!cubin)
    m->code_len = 0;
  wv_buf fn, what;
  wv_buf_init(&fn, ctx);
  tir_ptx_entry_name(k->name, &fn);
  m = c_names(ctx, m, wv_buf_str(&fn));
  wv_buf_init(&what, ctx);
  for (uint32_t i = 0; i < ctx->sources.n; i++)
    wv_buf_printf(&what, "%s%s", i ? ", " : "from ", ctx->sources.v[i].file);
  for (uint32_t i = 0; i < ctx->defines.n; i++) {
    const wv_define *d = &ctx->defines.v[i];
    if (d->is_float)
      wv_buf_printf(&what, " %s=%.17g", d->name, d->f);
    else
      wv_buf_printf(&what, " %s=%lld", d->name, (long long)d->i);
  }
  wv_buf guard;
  wv_buf_init(&guard, ctx);
  wv_buf_puts(&guard, "WAVEC_AOT_");
  for (const char *s = wv_buf_str(&fn); *s; s++)
    wv_buf_printf(&guard, "%c", *s >= 'a' && *s <= 'z' ? *s - 'a' + 'A' : *s);
  wv_buf_puts(&guard, "_H");
  wv_buf h, c;
  wv_buf_init(&h, ctx);
  wv_buf_init(&c, ctx);
  header(&h, m, wv_buf_str(&fn), wv_buf_str(&guard), wv_buf_str(&what));
  source(&c, m, wv_buf_str(&fn), header_name, wv_buf_str(&ptx), ptx.n,
         wv_buf_str(&what));
  WV_UNGUARD(ctx);
  *c_src = wv_buf_str(&c);
  *h_src = wv_buf_str(&h);
  if (with_cubin)
    *with_cubin = cubin;
  return WAVEC_OK;
}
