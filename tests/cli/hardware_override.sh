# --hardware takes every threads_per_wave its help lists (32|64|128): 128
# picks the warpgroup mma from the command line.
. tests/cli/lib.bash
gemm=(examples/gemm.wave -D M=128 -D N=128 -D K=64 -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=64)
run 0 run "${gemm[@]}" --hardware threads_per_wave=128,mma=F32_64xNx16_F16
run 0 compile "${gemm[@]}" --hardware threads_per_wave=128,mma=F32_64xNx16_F16 --emit=ptx --target sm_90a
has "$T/out" "wgmma.mma_async"
run 0 compile "${gemm[@]}" --hardware threads_per_wave=64,mma=F32_16x16x16_F16
for bad in 96 0 -32 128x ""; do
  run 2 compile "${gemm[@]}" --hardware "threads_per_wave=$bad"
  has "$T/err" "invalid --hardware entry 'threads_per_wave=$bad'"
done
