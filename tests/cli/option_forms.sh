# Every option that takes a value takes it as `--opt VALUE` and as
# `--opt=VALUE` (-D and -o as `-D VALUE` and `-DVALUE`), with the same
# effect; a missing value (the last word, an empty one, or another option
# in its place) is a usage error naming both forms, and a flag given a
# value is one too.
. tests/cli/lib.bash
gemm=(examples/gemm.wave -D M=64 -D N=64 -D K=32)
# forms WANT OPT VALUE ARGS...: wavec ARGS OPT VALUE and wavec ARGS
# OPT=VALUE (-DVALUE for a short OPT) both exit WANT and print the same
forms() {
  local want=$1 opt=$2 val=$3 joined
  shift 3
  case $opt in --*) joined="$opt=$val" ;; *) joined="$opt$val" ;; esac
  run "$want" "$@" "$opt" "$val"
  lacks "$T/err" "unknown option"
  cp "$T/out" "$T/out.split"
  cp "$T/err" "$T/err.split"
  run "$want" "$@" "$joined"
  lacks "$T/err" "unknown option"
  cmp -s "$T/out" "$T/out.split" || fail "'$opt $val' and '$joined' printed different things"
}

forms 0 -D M=64 compile examples/gemm.wave -D N=64 -D K=32
forms 0 --kernel gemm compile "${gemm[@]}"
forms 0 --print-after bind compile "${gemm[@]}"
has "$T/out" "// ---- after bind"
deep=(examples/gemm.wave -D M=64 -D N=64 -D K=256)
run 0 compile "${deep[@]}"
cp "$T/out" "$T/default"
forms 0 --hardware stages=1 compile "${deep[@]}"
! cmp -s "$T/out" "$T/default" || fail "--hardware stages=1 changed nothing"
forms 0 --target sm_80 compile "${gemm[@]}" --emit=ptx
has "$T/out" ".target sm_80"
forms 0 --emit ptx compile "${gemm[@]}"
has "$T/out" ".entry gemm"
forms 1 --max-steps 100 run "${gemm[@]}"
has "$T/err" "error[E0614]"
cmp -s "$T/err" "$T/err.split" || fail "--max-steps 100 and --max-steps=100 said different things"
forms 2 --tolerance 0.5 run "${gemm[@]}"
has "$T/err" "--tolerance is for run --compare sim"
forms 2 --compare sim run "${gemm[@]}" --target sim
has "$T/err" "--compare sim compares a GPU run with the simulator"

# -o FILE, -oFILE, and the files of run: --out, --arg, --seed
run 0 compile "${gemm[@]}" --emit=ptx -o "$T/a.ptx"
run 0 compile "${gemm[@]}" --emit=ptx -o"$T/b.ptx"
cmp -s "$T/a.ptx" "$T/b.ptx" || fail "-o FILE and -oFILE wrote different files"
run 0 run "${gemm[@]}" --out c="$T/c1.npy"
run 0 run "${gemm[@]}" --out=c="$T/c2.npy"
cmp -s "$T/c1.npy" "$T/c2.npy" || fail "--out c=F and --out=c=F wrote different files"
run 0 run "${gemm[@]}" --seed 3 --out c="$T/s1.npy"
run 0 run "${gemm[@]}" --seed=3 --out c="$T/s2.npy"
cmp -s "$T/s1.npy" "$T/s2.npy" || fail "--seed 3 and --seed=3 gave different results"
! cmp -s "$T/s1.npy" "$T/c1.npy" || fail "--seed 3 gave seed 1's result"
python3 -c "import numpy as np; np.save('$T/half.npy', np.full((64, 32), 0.5, np.float16))" ||
  fail "python3 with NumPy is needed"
run 0 run "${gemm[@]}" --arg a="$T/half.npy" --arg b="$T/half.npy" --out c="$T/a1.npy"
run 0 run "${gemm[@]}" --arg=a="$T/half.npy" --arg=b="$T/half.npy" --out=c="$T/a2.npy"
cmp -s "$T/a1.npy" "$T/a2.npy" || fail "--arg a=F and --arg=a=F gave different results"
python3 -c "import numpy as np, sys; sys.exit(not (np.load('$T/a2.npy') == 8).all())" ||
  fail "--arg=a=F: c is not 32 x 0.5 x 0.5 = 8 everywhere"

# wavec layout: --n, --svg, -D, --hardware, --kernel
forms 0 --n 8 layout F32_64xNx16_F16 acc
has "$T/out" "(N=8)"
forms 0 --kernel gemm layout "${gemm[@]}" acc
forms 0 -D M=64 layout examples/gemm.wave acc -D N=64 -D K=32
forms 0 --hardware stages=1 layout "${gemm[@]}" acc
run 0 layout F32_16x8x16_F16 acc --svg "$T/a.svg"
run 0 layout F32_16x8x16_F16 acc --svg="$T/b.svg"
cmp -s "$T/a.svg" "$T/b.svg" || fail "--svg F and --svg=F wrote different files"

# a missing value, in each of its forms
for opt in -D --hardware --kernel --print-after --arg --out --seed --max-steps \
  --target --compare --tolerance --emit -o; do
  run 2 compile "${gemm[@]}" "$opt"
  has "$T/err" "wavec: $opt wants a value ($opt "
  case $opt in --*) sep="=" ;; *) sep="" ;; esac
  has "$T/err" " or $opt$sep"
  case $opt in
  --*)
    run 2 compile "${gemm[@]}" "$opt="
    has "$T/err" "wavec: $opt wants a value"
    ;;
  esac
  run 2 compile "${gemm[@]}" "$opt" --time
  has "$T/err" "wavec: $opt wants a value ($opt "
  has "$T/err" "), not the option '--time'"
done
for opt in --n --svg -D --hardware --kernel; do
  run 2 layout F32_16x8x16_F16 acc "$opt"
  has "$T/err" "wavec layout: $opt wants a value"
done
run 2 compile "${gemm[@]}" --time=1
has "$T/err" "--time takes no value"
run 2 compile "${gemm[@]}" --seeds=3
has "$T/err" "unknown option '--seeds=3'"
# -o - (stdout) is a value, not a missing one
run 0 compile "${gemm[@]}" --emit ptx -o -
has "$T/out" ".entry gemm"

run 0 --help
has "$T/out" "each that takes a value takes it as --opt VALUE or"
run 0 layout --help
has "$T/out" "a value as --opt VALUE or --opt=VALUE"
