# Command-line messages and exit statuses: -D integers (huge, hex), repeated
# -D (a warning, the last counts), repeated --arg/--out, -o or --emit where
# they mean nothing, a .npy that does not fit (E0612, status 3) apart from
# a machine without a CUDA driver (E0613, no caret, status 4).
. tests/cli/lib.bash
gemm=(examples/gemm.wave -D N=64 -D K=64)

run 2 compile "${gemm[@]}" -D M=99999999999999999999
has "$T/err" "-D M=99999999999999999999: the integer is out of range"
lacks "$T/err" "float"
run 0 compile "${gemm[@]}" -D M=0x100 -D K=0x40
has "$T/out" "arg 0 a f16 16384 elements"
run 1 compile "${gemm[@]}" -D M=-0x10
has "$T/err" "dimension 'M' = -16 is not positive"
run 2 compile "${gemm[@]}" -D M=0x
has "$T/err" "-D value is not a number"
run 2 compile "${gemm[@]}" -D M=0x1p4
run 2 compile "${gemm[@]}" -D M=1e999
has "$T/err" "out of the range of a double"
run 1 compile "${gemm[@]}" -D M=1.5
has "$T/err" "'M' = 1.5 is a float"

run 0 compile "${gemm[@]}" -D M=64 -D M=128
has "$T/err" "warning: -D M=128 repeats -D M=64; the last one counts"
has "$T/out" "tir grid [2, 1, 1]"

run 2 run "${gemm[@]}" -D M=64 --out c=$T/a.npy --out c=$T/b.npy
has "$T/err" "--out c given twice ($T/a.npy and $T/b.npy)"
run 2 run "${gemm[@]}" -D M=64 --arg a=$T/a.npy --arg a=$T/b.npy
has "$T/err" "--arg a given twice"

run 2 compile "${gemm[@]}" -D M=64 -o $T/x.ptx
has "$T/err" "-o $T/x.ptx: -o writes what --emit=ptx|cubin|c makes"
[ ! -e $T/x.ptx ] || fail "-o without --emit wrote $T/x.ptx"
run 2 run "${gemm[@]}" -D M=64 --emit=ptx
has "$T/err" "--emit is for compile, not run"

# a file: missing source, a .npy that does not fit
run 3 compile $T/missing.wave
run 0 run "${gemm[@]}" -D M=64 --out c=$T/c.npy
run 3 run "${gemm[@]}" -D M=64 --arg a=$T/c.npy
has "$T/err" "c.npy: error[E0612]: holds <f4 [64, 64] but argument 'a' is f16 [64, 64]"
run 3 run "${gemm[@]}" -D M=64 --arg a=$T/missing.npy

# the machine: no CUDA driver is no error of the kernel's, and has no caret
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
  echo "note: a CUDA driver is installed; the no-driver case is not run"
else
  run 4 run "${gemm[@]}" -D M=64 --target sm_90
  has "$T/err" "error[E0613]: no CUDA driver"
  lacks "$T/err" "^"
  lacks "$T/err" "gemm.wave:"
fi

# tiles past a thread's registers: a remark below the refusal's estimate
# (256 x 128: the accumulator's 256 a thread and a tile of b's; 256 x 64,
# whose 128 accumulators the mma adds to in place, gets none)
run 0 compile "${gemm[@]}" -D M=256 -D BLOCK_M=256 -D BLOCK_N=64 --remarks
lacks "$T/err" "these tiles need"
run 0 compile examples/gemm.wave -D N=128 -D K=64 -D M=256 -D BLOCK_M=256 -D BLOCK_N=128 --remarks
has "$T/err" "gemm.wave:7:9: remark: these tiles need about 320 32-bit registers per thread, more than the 255 a thread has"

# --emit on a file of several kernels names the --emit given and lists
# the kernels; --emit for the simulator, and --seed out of range, are
# command-line errors (status 2)
run 2 compile examples/attention_bwd.wave -D B=1 -D M=64 -D K2=64 -D K1=32 -D N=32 --emit=c -o $T/x.c
has "$T/err" "has 6 kernels; --emit=c writes one: choose it with --kernel (attention_bwd_D, attention_bwd_dkdv,"
[ ! -e $T/x.c ] || fail "--emit=c of 6 kernels wrote $T/x.c"
run 2 compile "${gemm[@]}" -D M=64 --emit=ptx --target sim -o $T/x.ptx
has "$T/err" "--emit=ptx makes code for a GPU"
for s in -1 18446744073709551616 x; do
  run 2 run "${gemm[@]}" -D M=64 --seed "$s"
  has "$T/err" "--seed wants a number from 0 to 2^64 - 1, not '$s'"
done
# a .npy whose run-time dim disagrees with another argument's: status 3,
# as for one whose static dims differ
python3 -c "
import numpy as np
np.save('$T/da.npy', np.zeros((64, 96), np.float16)); np.save('$T/db.npy', np.zeros((32, 80), np.float16))"
run 3 run tests/kernels/dynamic.wave --kernel gemm_dyn --arg a=$T/da.npy --arg b=$T/db.npy
has "$T/err" "argument 'b': dimension 1 ('K') is 80, the shape of 'a' gave 96"
# run with --out (or --arg) in a file of several kernels: which one's?
run 2 run examples/attention_bwd.wave -D B=1 -D M=64 -D K2=64 -D N=32 -D K1=32 --out dq=$T/dq.npy
has "$T/err" "has 6 kernels; --out names one's arguments: choose it with --kernel (attention_bwd_D,"
[ ! -e $T/dq.npy ] || fail "run of 6 kernels wrote $T/dq.npy"
# a run-time size defined and given by an argument: the argument's is run,
# with a warning that names both
python3 -c "
import numpy as np
np.save('$T/ea.npy', np.zeros((64, 96), np.float16)); np.save('$T/eb.npy', np.zeros((32, 96), np.float16))"
run 0 run tests/kernels/dynamic.wave --kernel gemm_dyn -D M=50 -D K=96 --arg a=$T/ea.npy --arg b=$T/eb.npy --out c=$T/ec.npy
has "$T/err" "wavec: warning: -D M=50 is not what 'a' gives (M = 64, from $T/ea.npy): the argument's size is the one run"
lacks "$T/err" "-D K=96"
python3 -c "import numpy as np; assert np.load('$T/ec.npy').shape == (64, 32)" || fail "the output is not 64 x 32"
# an output given by --arg keeps what the kernel does not write (no E0606);
# without it, the elements it leaves are reported
python3 -c "
import numpy as np
np.save('$T/sx.npy', np.arange(50, dtype=np.float32)); np.save('$T/sy.npy', np.full(66, -5, np.float32))"
run 0 run tests/kernels/regress.wave --kernel scatter_add -D N=50 -D S=66 --arg x=$T/sx.npy --arg y=$T/sy.npy --out y=$T/sy2.npy
python3 -c "
import numpy as np
y = np.load('$T/sy2.npy'); x = np.arange(50)
want = np.full(66, -5.0); want[2:52] += x + 1
assert (y == want).all(), y" || fail "scatter_add with y given: wrong values"
run 0 run tests/kernels/regress.wave --kernel shift_write -D N=50 --arg x=$T/sx.npy --arg y=$T/sx.npy --out y=$T/sw.npy
python3 -c "
import numpy as np
y = np.load('$T/sw.npy'); x = np.arange(50)
assert (y[:49] == x[1:] + 1).all() and y[49] == 49, y" || fail "shift_write with y given: y[49] not kept"
run 1 run tests/kernels/regress.wave --kernel shift_write -D N=50 --arg x=$T/sx.npy --out y=$T/sw2.npy
has "$T/err" "error[E0606]: output 'y': 1 of 50 elements were never written (first: [49])"

# run's own options on another command are usage errors, not ignored
run 2 compile "${gemm[@]}" -D M=64 --seed 3
has "$T/err" "--seed is for run (its inputs), not compile"
run 2 check "${gemm[@]}" -D M=64 --out c=$T/never.npy
has "$T/err" "--out is for run (its outputs), not check"
[ ! -e "$T/never.npy" ] || fail "check wrote an output"
run 2 compile "${gemm[@]}" -D M=64 --arg a=$T/a.npy
has "$T/err" "--arg is for run (its inputs), not compile"

# check stops after pass check: printing after a later one is a usage error
run 2 check "${gemm[@]}" -D M=64 --print-after=lower
has "$T/err" "check stops after pass check"
run 0 check "${gemm[@]}" -D M=64 --print-after=check
has "$T/out" "// ---- after check"

# an argument file the reader refuses is E0612 on the file, as one whose
# type or shape does not fit is
printf 'garbage' >"$T/bad.npy"
run 3 run "${gemm[@]}" -D M=64 --arg a=$T/bad.npy
has "$T/err" "bad.npy: error[E0612]: not a .npy file"
run 3 run "${gemm[@]}" -D M=64 --arg a=$T/missing.npy
has "$T/err" "missing.npy: error[E0612]: cannot open"

# a repeated --hardware key warns, as a repeated -D does; the last counts
run 0 compile "${gemm[@]}" -D M=64 --hardware stages=2,stages=3 --hardware stages=4 --remarks
has "$T/err" "warning: --hardware stages=3 repeats --hardware stages=2; the last one counts"
has "$T/err" "warning: --hardware stages=4 repeats --hardware stages=3"
has "$T/err" "in 4 stages"
