# compile --emit=c: arguments and dynamic dims named as the launcher's own
# locals (f, st, r, args, tmap, dim, ...), its parameter (stream), the types
# and functions it uses (CUdeviceptr, uint32_t, wavec_status,
# cuLaunchKernel, the kernel's own NAME_result), a C or C++ keyword (int,
# class), a macro of the headers (NULL, CUDA_VERSION) or one another's C
# name (f and f_) still give C that compiles warning-free, as C and, the
# header, as C++; the header's prototype and the C file's definition agree.
. tests/cli/lib.bash
CUDA=${CUDA_HOME:-/usr/local/cuda}
if [ ! -e "$CUDA/include/cuda.h" ]; then
  echo "SKIPPED: no $CUDA/include/cuda.h (the CUDA toolkit; set CUDA_HOME)"
  exit 0
fi
export WAVEC_CACHE_DIR=$T/cache
export WAVEC_PTXAS=$T/no-ptxas # the PTX alone: no ptxas needed
CC=${CC:-cc}
CXX=${CXX:-c++}

# an elementwise kernel over two arguments named A and B, and one over
# run-time sizes R and S
ew() { # NAME A B
  cat <<W
kernel $1($2: Memory[M, N, f16], $3: Memory[M, N, f16]) {
    constraints { workgroup(M, 32, 0)
                  workgroup(N, 64, 1)
                  wave(M, 8)
                  hardware(threads_per_wave = 32, vector_shapes = {M: 8, N: 32}) }
    defaults { M = 64, N = 64 }
    write(read($2) * 2.0 + 1.0, $3)
}
W
}
dyn() { # NAME R S
  cat <<W
kernel $1(x: Memory[$2, $3, f16], y: Memory[$2, $3, f16]) {
    constraints { dynamic($2)
                  dynamic($3, multiple_of = 8)
                  workgroup($2, 32, 0)
                  workgroup($3, 64, 1)
                  wave($2, 8)
                  hardware(threads_per_wave = 32, vector_shapes = {$2: 8, $3: 32}) }
    write(read(x) * 2.0 + 1.0, y)
}
W
}
{
  ew k_f f st
  ew k_r r args
  ew k_types CUdeviceptr int
  ew k_stream stream uint32_t
  ew k_taken f f_
  ew k_own k_own_result k_own_fail
  ew k_macros NULL CUDA_VERSION
  ew k_cxx class wavec_status
  dyn k_dyn r stream
  dyn k_dyn2 f CUresult
} >"$T/names.wave"
# the tensor-map launcher (sm_90a), its locals as argument and size names
sed -n '/^kernel gemm_dyn_wgmma(/,/^}/p' tests/kernels/dynamic.wave |
  sed -e 's/\ba\b/tmap/g; s/\bb\b/dim/g; s/\bc\b/tr/g; s/\bM\b/stride/g; s/\bN\b/box/g; s/\bK\b/estride/g' \
    -e 's/gemm_dyn_wgmma/k_tmap/' >"$T/tmap.wave"
grep -q 'kernel k_tmap(tmap: Memory\[stride, estride, f16\]' "$T/tmap.wave" || fail "tmap.wave: $(head -2 "$T/tmap.wave")"

cflags=(-Wall -Wextra -Werror -I"$CUDA/include")
compile() { # NAME: the C file, then the header alone as C (-std=c11
  # -pedantic) and as C++
  "$CC" "${cflags[@]}" -c "$T/$1.c" -o "$T/$1.o" 2>"$T/err" || fail "cc -c $1.c failed:
$(grep -m3 -A3 error "$T/err")
$(grep "_launch(" "$T/$1.h")"
  printf '#include "%s.h"\n' "$1" >"$T/use_$1.c"
  "$CC" -std=c11 -pedantic "${cflags[@]}" -c "$T/use_$1.c" -o /dev/null 2>"$T/err" ||
    fail "cc -std=c11 -pedantic: $1.h failed"
  if command -v "$CXX" >/dev/null; then
    cp "$T/use_$1.c" "$T/use_$1.cc"
    "$CXX" "${cflags[@]}" -c "$T/use_$1.cc" -o /dev/null 2>"$T/err" || fail "c++: $1.h failed"
  fi
}
for k in k_f k_r k_types k_stream k_taken k_own k_macros k_cxx k_dyn k_dyn2; do
  run 0 compile "$T/names.wave" --kernel $k --target sm_80 --emit=c -o "$T/$k.c"
  compile $k
done
run 0 compile "$T/tmap.wave" --target sm_90a --emit=c -o "$T/k_tmap.c"
has "$T/k_tmap.c" "cuTensorMapEncodeTiled("
compile k_tmap

# what the names became: one C name each, kept where nothing clashes
has "$T/k_f.h" "k_f_launch(CUstream stream, CUdeviceptr f_, CUdeviceptr st_);"
has "$T/k_r.h" "k_r_launch(CUstream stream, CUdeviceptr r_, CUdeviceptr args_);"
has "$T/k_types.h" "k_types_launch(CUstream stream, CUdeviceptr wv_CUdeviceptr, CUdeviceptr int_);"
has "$T/k_stream.h" "k_stream_launch(CUstream stream, CUdeviceptr stream_, CUdeviceptr wv_uint32_t);"
has "$T/k_taken.h" "k_taken_launch(CUstream stream, CUdeviceptr f_, CUdeviceptr f__);"
has "$T/k_own.h" "k_own_launch(CUstream stream, CUdeviceptr k_own_result_, CUdeviceptr k_own_fail_);"
has "$T/k_macros.h" "k_macros_launch(CUstream stream, CUdeviceptr NULL_, CUdeviceptr wv_CUDA_VERSION);"
has "$T/k_cxx.h" "k_cxx_launch(CUstream stream, CUdeviceptr class_, CUdeviceptr wv_wavec_status);"
has "$T/k_dyn.h" "k_dyn_launch(CUstream stream, CUdeviceptr x, CUdeviceptr y, uint32_t r_, uint32_t stream_);"
has "$T/k_dyn.h" "grid [ceil(r_ / 32), ceil(stream_ / 64), 1]"
has "$T/k_dyn.c" "if (stream_ == 0 || stream_ > 2147483647u || stream_ % 8u) {"
has "$T/k_dyn2.h" "k_dyn2_launch(CUstream stream, CUdeviceptr x, CUdeviceptr y, uint32_t f_, uint32_t wv_CUresult);"
has "$T/k_tmap.h" "k_tmap_launch(CUstream stream, CUdeviceptr tmap_, CUdeviceptr dim_, CUdeviceptr tr_, uint32_t stride_, uint32_t box_, uint32_t estride_);"
# the definition is the prototype
for k in k_f k_r k_types k_stream k_taken k_own k_macros k_cxx k_dyn k_dyn2 k_tmap; do
  proto=$(grep "_launch(CUstream" "$T/$k.h")
  has "$T/$k.c" "${proto%;} {"
done
# plain names stay as they are
run 0 compile examples/gemm.wave -D M=64 -D N=64 -D K=32 --target sm_80 --emit=c -o "$T/gemm.c"
has "$T/gemm.h" "wavec_status gemm_launch(CUstream stream, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c);"
