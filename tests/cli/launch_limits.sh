# Grids no launch can take (tir_launch_grid): more than 65535 workgroups
# along y or z, 2^31-1 along x, or more than 2^31-1 persistent tiles (a
# tile's index is 32-bit). With run-time sizes, `run` refuses them (E0701)
# before allocating the tensors, so these runs are instant even though the
# tensors would take terabytes; with sizes known at compile time,
# persistent tiles past 2^31-1 are E0408 at compile time; the C launcher
# refuses such sizes itself (WAVEC_ERR_UNSUPPORTED).
. tests/cli/lib.bash
dyn=(tests/kernels/dynamic.wave --kernel gemm_dyn)
# 64 x 65536 tiles of 64 x 64: the grid along y is past 65535
run 1 run "${dyn[@]}" -D M=64 -D N=4194304 -D K=64
has "$T/err" "dynamic.wave:6:8: error[E0701]: the sizes give a grid of [1, 65536, 1] workgroups, more than a launch allows (2^31-1 along x, 65535 along y and z)"
# persistent: one workgroup loops over tiles, but 65536 x 65536 of them
# are past 2^31-1
run 1 run "${dyn[@]}" --hardware persistent=1 -D M=4194304 -D N=4194304 -D K=64
has "$T/err" "error[E0701]: the sizes give persistent tiles [65536, 65536, 1], more than 2^31-1 in all (a tile's index is 32-bit)"
lacks "$T/err" "out of memory"
# the same sizes, static: at compile time, at the loop (no hardware entry
# in the source to point at)
run 1 compile examples/gemm.wave --hardware persistent=1 -D M=4194304 -D N=4194304 -D K=64
has "$T/err" "gemm.wave:14:11: error[E0408]: --hardware persistent=1: persistent tiles [65536, 65536, 1], more than 2^31-1 in all"
# just inside: 32768 x 65535 tiles compile, on a grid of 132
run 0 compile examples/gemm.wave --hardware persistent=1 -D M=2097152 -D N=4194240 -D K=64
has "$T/out" "tir grid [132, 1, 1]"
# the C launchers check the sizes they are given
run 0 compile "${dyn[@]}" --emit=c --target sm_90 -o "$T/g.c"
has "$T/g.c" "if (((N + 64ull - 1) / 64ull) > 65535ull) {"
has "$T/g.h" "WAVEC_ERR_UNSUPPORTED for sizes giving more workgroups than a"
run 0 compile tests/kernels/dynamic.wave --kernel gemm_dyn_wgmma --hardware persistent=1 --emit=c --target sm_90a -o "$T/p.c"
has "$T/p.c" "if (((M + 128ull - 1) / 128ull) * ((N + 128ull - 1) / 128ull) > 2147483647ull ||"
has "$T/p.c" "((M + 128ull - 1) / 128ull) * ((N + 128ull - 1) / 128ull) * 1ull > 2147483647ull) {"
has "$T/p.h" "WAVEC_ERR_UNSUPPORTED for sizes giving more than 2^31-1 tiles."
