# The schedule's knobs from the command line: --help lists them, their
# remarks are what tests/cli/schedule.remarks holds, specialize=0 turns a
# kernel's own specialize = 1 off, values out of range are refused, and
# specialize where it cannot apply is E0408.
. tests/cli/lib.bash
gemm=(examples/gemm_wgmma.wave -D M=256 -D N=256 -D K=256)
run 0 --help
has "$T/out" "specialize=0..1"
has "$T/out" "persistent=0..1"
has "$T/out" "sms=1..1024"
has "$T/out" "group_m=1..256"
run 0 compile "${gemm[@]}" --remarks --hardware specialize=1,persistent=1,sms=3
diff -u tests/cli/schedule.remarks "$T/err" || fail "remarks differ from tests/cli/schedule.remarks"
has "$T/out" "tir grid [3, 1, 1] block [384, 1, 1]"
has "$T/out" "setmaxnreg.dec.pred 24"
has "$T/out" "setmaxnreg.inc.pred 240"
# the kernel's own entry, turned off from the command line
sed 's/mma = F32_64xNx16_F16)/mma = F32_64xNx16_F16, specialize = 1)/' examples/gemm_wgmma.wave >"$T/spec.wave"
run 0 compile "$T/spec.wave" -D M=256 -D N=256 -D K=256
has "$T/out" "block [384, 1, 1]"
run 0 compile "$T/spec.wave" -D M=256 -D N=256 -D K=256 --hardware specialize=0
has "$T/out" "block [256, 1, 1]"
lacks "$T/out" "setmaxnreg"
for bad in 2 -1 x; do
  run 2 compile "${gemm[@]}" --hardware "specialize=$bad"
  has "$T/err" "invalid --hardware entry 'specialize=$bad'"
done
run 1 compile "$T/spec.wave" -D M=256 -D N=256 -D K=256 --hardware copies=1
has "$T/err" "spec.wave:13:"
has "$T/err" "error[E0408]: hardware(specialize = 1): warp specialization needs"
# persistent tiles: the grid is min(tiles, sms); sms defaults to the H200's
run 0 compile "${gemm[@]}" --hardware persistent=1
has "$T/out" "tir grid [4, 1, 1] block [256, 1, 1]"
run 0 compile examples/gemm_wgmma.wave -D M=4096 -D N=4096 -D K=128 --hardware persistent=1
has "$T/out" "tir grid [132, 1, 1]"
run 0 run "${gemm[@]}" --hardware persistent=1,sms=3,specialize=1
# the C launcher of a persistent kernel of run-time sizes computes its grid
run 0 compile tests/kernels/dynamic.wave --kernel gemm_dyn_wgmma --hardware persistent=1,sms=3,specialize=1 --emit=c --target sm_90a -o "$T/k.c"
has "$T/k.h" "grid [min(ceil(M / 128) x ceil(N / 128) x 1, 3), 1, 1], block"
has "$T/k.c" "cuLaunchKernel(f, (unsigned)(((M + 128ull - 1) / 128ull) * ((N + 128ull - 1) / 128ull) * 1ull < 3ull ? "
