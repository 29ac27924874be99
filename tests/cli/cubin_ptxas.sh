# --emit=cubin finds ptxas as the library does for --emit=c and the GPU
# loads ($WAVEC_PTXAS, $CUDA_HOME, /usr/local/cuda, $PATH): with neither
# CUDA_HOME nor the toolkit on PATH it takes /usr/local/cuda's; a
# WAVEC_PTXAS that is not there is "not found" (status 4), naming it.
. tests/cli/lib.bash
gemm=(examples/gemm.wave -D M=64 -D N=64 -D K=64 --emit=cubin --target sm_90)
if [ -x /usr/local/cuda/bin/ptxas ]; then
  PATH=/usr/bin:/bin CUDA_HOME=/nonexistent run 0 compile "${gemm[@]}" -o "$T/a.cubin"
  [ -s "$T/a.cubin" ] || fail "no cubin"
else
  echo "SKIPPED: no /usr/local/cuda/bin/ptxas (the CUDA toolkit)"
fi
WAVEC_PTXAS=/nonexistent run 4 compile "${gemm[@]}" -o "$T/b.cubin"
has "$T/err" "not found: set WAVEC_PTXAS"
[ ! -e "$T/b.cubin" ] || fail "a cubin without ptxas"
