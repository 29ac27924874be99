#!/usr/bin/env bash
# Snapshot of what the compiler makes of every kernel in examples/, bench/
# and tests/kernels/ at the sizes and hardware the tests, the demo
# (tools/demo.c) and the benchmarks (bench/bench.py) use: per case its PTX
# for sm_80, sm_90 and sm_90a (or the refusal), its remarks and its thread
# program (what `wavec compile` prints: the program after the last pass).
# Two snapshots of two compilers must be byte-identical when a change only
# moves code:
#
#   tools/snapshot.sh OUTDIR [WAVEC]        write the snapshot (WAVEC:
#                                           build/release/wavec)
#   diff -r BEFORE AFTER                    compare two of them
#   tools/snapshot.sh --time [WAVEC] [N]    compile times of the benchmark
#                                           sizes: per case the fastest of N
#                                           runs (default 5) of source -> PTX,
#                                           per pass, summed over the cases
#   tools/snapshot.sh --list                the cases, one a line
#
# A case is: FILE KERNEL HARDWARE [-D SYM=VALUE ...] with HARDWARE the
# --hardware argument or '-'. Every run's stdout, stderr and exit status are
# kept, so a refusal (an MFMA kernel on sm_80, wgmma on sm_90) is compared
# too.
set -u
cd "$(dirname "$0")/.."

NV=threads_per_wave=32,mma=F32_16x8x16_F16
MF=threads_per_wave=64,mma=F32_16x16x16_F16

# ---- the cases --------------------------------------------------------------
attn() { # FILE KERNEL HW B M N [EXTRA -D ...]
  local f=$1 k=$2 hw=$3 b=$4 m=$5 n=$6
  shift 6
  echo "$f $k $hw -D B=$b -D M=$m -D K2=$m -D N=$n -D K1=$n $*"
}

test_cases() {
  # tests/golden
  echo "examples/gemm.wave gemm - -D M=128 -D N=128 -D K=64"
  echo "examples/gemm.wave gemm - -D M=32 -D N=32 -D K=32 -D BLOCK_M=32 -D BLOCK_N=32 -D BLOCK_K=16"
  echo "examples/gemm.wave gemm stages=2 -D M=64 -D N=64 -D K=128"
  echo "examples/gemm.wave gemm - -D M=64 -D N=64 -D K=128 -D BLOCK_K=32"
  echo "examples/attention_fwd.wave attention_fwd_causal - -D B=1 -D M=64 -D K2=64 -D N=32 -D K1=32"
  echo "examples/attention_fwd.wave attention_fwd - -D B=1 -D M=64 -D K2=64 -D N=32 -D K1=32"
  local hw
  for hw in $NV $MF; do
    echo "examples/attention_bwd_dkdv.wave attention_bwd_dkdv $hw -D B=1 -D M=32 -D K2=32 -D N=32 -D K1=32"
  done
  echo "examples/attention_bwd_dkdv.wave attention_bwd_dkdv $NV -D B=2 -D M=64 -D K2=64 -D N=64 -D K1=64"
  # tests/unit/test_ptx.c
  local k
  for k in attention_bwd_D attention_bwd_dkdv attention_bwd_dq attention_bwd_dkdv_causal attention_bwd_dq_causal; do
    echo "examples/attention_bwd.wave $k - -D B=1 -D M=64 -D K2=64 -D N=32 -D K1=32"
  done
  attn examples/attention_fwd.wave attention_fwd_causal - 2 128 64
  for k in gemm_f16 gemm_bf16; do echo "bench/gemm.wave $k - -D M=256 -D N=256 -D K=64"; done
  echo "bench/gemm.wave gemm_bf16 stages=1 -D M=256 -D N=256 -D K=256"
  echo "bench/gemm.wave gemm_bf16 workgroups_per_sm=2 -D M=256 -D N=256 -D K=256"
  echo "examples/gemm_wgmma.wave gemm_wgmma - -D M=256 -D N=256 -D K=256"
  attn examples/attention_fwd_wgmma.wave attention_fwd_wgmma - 2 256 128
  attn examples/attention_fwd_wgmma.wave attention_fwd_wgmma_causal - 1 256 64
  echo "bench/gemm.wave gemm_wgmma_bf16 stages=4 -D M=256 -D N=512 -D K=128"
  attn examples/attention_bwd_wgmma.wave attention_bwd_dkdv_wgmma - 2 256 128
  attn examples/attention_bwd_wgmma.wave attention_bwd_dq_wgmma_causal - 1 256 64
  # tests/unit/test_reduce_add.c, test_attention_bwd.c (one pass)
  for k in gemm_split_k gemm_split_k_waves col_sum row_sum store_then_add; do
    echo "tests/kernels/reduce_add.wave $k - -D M=50 -D N=70 -D K=200"
  done
  echo "tests/kernels/reduce_add.wave gemm_split_k_waves sum_parts=0 -D M=50 -D N=70 -D K=200"
  echo "tests/kernels/reduce_add.wave gemm_split_k_acc - -D M=50 -D N=70 -D K=200"
  echo "tests/kernels/reduce_add.wave col_sum_init - -D M=50 -D N=70 -D K=200"
  # tests/unit/test_barriers.c
  echo "tests/kernels/barriers.wave two_reductions - -D M=40"
  echo "tests/kernels/barriers.wave softmax_rows - -D M=10"
  for a in 1 2; do
    echo "tests/kernels/reduce_add.wave gemm_add_wgmma adds=$a -D M=100 -D N=72 -D K=200"
  done
  attn examples/attention_bwd_wgmma.wave attention_bwd_fused_wgmma adds=2 1 200 64
  attn examples/attention_bwd.wave attention_bwd_fused - 2 128 64
  attn examples/attention_bwd.wave attention_bwd_fused - 1 100 32 -D BLOCK_M=64 -D BLOCK_K2=64 -D WAVES=4
  attn examples/attention_bwd_wgmma.wave attention_bwd_fused_wgmma - 1 200 64
  attn examples/attention_bwd_wgmma.wave attention_bwd_fused_wgmma_causal - 2 256 128
  echo "examples/gemm.wave gemm - -D M=64 -D N=64 -D K=32"
  # tests/unit/test_numerics.c
  local s
  for hw in $NV $MF; do
    for s in "64 64 32" "128 64 64" "64 128 96" "128 128 128"; do
      set -- $s
      echo "examples/gemm.wave gemm $hw -D M=$1 -D N=$2 -D K=$3"
    done
  done
  echo "examples/gemm_wgmma.wave gemm_wgmma - -D M=128 -D N=128 -D K=64"
  echo "examples/gemm_wgmma.wave gemm_wgmma - -D M=256 -D N=128 -D K=256"
  echo "examples/gemm_wgmma.wave gemm_wgmma - -D M=128 -D N=256 -D K=192 -D BLOCK_N=64"
  echo "examples/gemm_wgmma.wave gemm_wgmma - -D M=256 -D N=256 -D K=128 -D BLOCK_M=64 -D BLOCK_N=256"
  echo "examples/gemm_wgmma.wave gemm_wgmma stages=3 -D M=128 -D N=128 -D K=512"
  echo "examples/gemm_wgmma.wave gemm_wgmma stages=4 -D M=256 -D N=256 -D K=768 -D BLOCK_N=128"
  local m n c
  for c in "" _causal; do
    for m in 64 128; do
      for n in 16 32 64; do attn examples/attention_fwd.wave attention_fwd$c - 2 $m $n; done
    done
    attn examples/attention_fwd_wgmma.wave attention_fwd_wgmma$c - 1 128 64
    attn examples/attention_fwd_wgmma.wave attention_fwd_wgmma$c - 2 256 64 -D BLOCK_K2=128
    attn examples/attention_fwd_wgmma.wave attention_fwd_wgmma$c - 1 256 128
    attn examples/attention_fwd_wgmma.wave attention_fwd_wgmma$c - 1 128 128 -D BLOCK_M=64
    attn examples/attention_fwd_wgmma.wave attention_fwd_wgmma$c stages=4 1 128 64
    for k in dkdv dq; do
      attn examples/attention_bwd.wave attention_bwd_$k$c - 2 128 64
      attn examples/attention_bwd.wave attention_bwd_$k$c - 1 128 32 -D BLOCK_M=64 -D BLOCK_K2=64 -D WAVES=4
      attn examples/attention_bwd_wgmma.wave attention_bwd_${k}_wgmma$c - 2 128 64
      attn examples/attention_bwd_wgmma.wave attention_bwd_${k}_wgmma$c - 2 256 128
    done
  done
  for n in 16 32 64; do
    for hw in $NV $MF; do
      echo "examples/attention_bwd_dkdv.wave attention_bwd_dkdv $hw -D B=1 -D M=64 -D K2=64 -D N=$n -D K1=$n"
    done
  done
  # tests/kernels/regress.wave (tests/unit/test_regress.c)
  for m in 4 8 64; do
    echo "tests/kernels/regress.wave rowsum - -D M=$m -D N=48"
    echo "tests/kernels/regress.wave rowsum_waves - -D M=$m -D N=128"
  done
  echo "tests/kernels/regress.wave ints - -D N=16"
  for s in 1 2 3 4; do
    echo "tests/kernels/regress.wave decayed_gemm_wgmma stages=$s -D M=64 -D N=128 -D K=256"
  done
  local r=tests/kernels/regress.wave
  echo "$r loop_result_lhs -"
  echo "$r loop_result_lhs - -D M=64 -D K=32 -D P=32 -D T=16"
  echo "$r loop_result_rhs -"
  echo "$r loop_result_rhs - -D M=64 -D K=64 -D P=48 -D T=48"
  for hw in - $MF; do
    echo "$r gemm_chain $hw -D M=64 -D N=32 -D K=96 -D P=16"
    echo "$r gemm_chain $hw -D M=128 -D N=64 -D K=64 -D P=32 -D WAVES=1"
  done
  echo "$r loop_sum_lhs -"
  echo "$r loop_sum_lhs - -D M=32 -D K=16 -D P=32 -D T=10"
  echo "$r int_div - -D N=40"
  # sums over lanes holding copies (test_regress.c sum_of_copies)
  echo "$r sum_copies - -D M=8 -D N=17"
  echo "$r sum_copies_tiled - -D M=4 -D N=100 -D T=20"
  echo "$r softmax_copies - -D M=2 -D N=30"
  # grouped-query attention (tests/unit/test_gqa.c)
  local q=tests/kernels/gqa.wave
  echo "$q attention_gqa_wgmma - -D B=1 -D H=8 -D HK=2 -D M=256 -D K2=256 -D K1=64 -D N=64"
  echo "$q attention_gqa_wgmma specialize=1,persistent=1,sms=3 -D B=2 -D H=4 -D HK=2 -D G=2 -D M=200 -D K2=200 -D K1=128 -D N=128"
  echo "$q attention_gqa - -D B=1 -D H=6 -D HK=3 -D G=2 -D M=77 -D K2=77 -D K1=64 -D N=64"
  echo "$q gqa_keys_named_m - -D B=1 -D H=4 -D HK=2 -D M=64 -D K2=64 -D K1=32 -D N=32"
  echo "$q key_row_from_head_loop - -D H=5 -D M=32 -D K2=96 -D K1=64"
  # ragged sizes (tests/unit/test_ragged.c, test_ptx.c, test_attention_bwd.c)
  local g=tests/kernels/ragged.wave
  for n in 100 128 1; do echo "$g shift_fill - -D N=$n"; done
  for n in 16 40 100; do echo "$g row_reduce - -D M=8 -D N=$n"; done
  echo "$g int_div - -D N=40"
  echo "examples/gemm.wave gemm - -D M=17 -D N=33 -D K=100"
  for hw in - copies=1; do
    echo "examples/gemm_wgmma.wave gemm_wgmma $hw -D M=129 -D N=250 -D K=200"
  done
  for m in 1 77 100; do
    for c in "" _causal; do
      attn examples/attention_fwd.wave attention_fwd$c - 1 $m 32
      attn examples/attention_bwd.wave attention_bwd_dkdv$c - 1 $m 32
      attn examples/attention_bwd.wave attention_bwd_dq$c - 1 $m 32
      attn examples/attention_fwd_wgmma.wave attention_fwd_wgmma$c - 1 $m 64
      attn examples/attention_bwd_wgmma.wave attention_bwd_dkdv_wgmma$c - 1 $m 64
      attn examples/attention_bwd_wgmma.wave attention_bwd_dq_wgmma$c - 1 $m 64
    done
  done
  # run-time sizes (tests/kernels/dynamic.wave: one program for every size)
  local y=tests/kernels/dynamic.wave
  echo "$y gemm_dyn -"
  echo "$y gemm_dyn_wgmma -"
  for c in "" _causal; do
    echo "$y attention_fwd_dyn$c - -D B=1 -D N=64 -D K1=64"
  done
  echo "$y gemm_add_dyn -"
  echo "$y row_mean_dyn -"
  # 8-bit mma (tests/unit/test_fp8mma.c, test_ptx.c)
  local s8
  for s8 in "128 128 256" "17 33 112" "200 72 96" "256 256 512"; do
    set -- $s8
    echo "examples/gemm_fp8.wave gemm_fp8 - -D M=$1 -D N=$2 -D K=$3"
    echo "examples/gemm_i8.wave gemm_i8 - -D M=$1 -D N=$2 -D K=$3"
  done
  for s8 in "64 64 128" "17 33 100" "200 72 96"; do
    set -- $s8
    echo "examples/gemm_fp8.wave gemm_fp8_sync - -D M=$1 -D N=$2 -D K=$3"
    echo "examples/gemm_i8.wave gemm_i8_sync - -D M=$1 -D N=$2 -D K=$3"
  done
  local f8=tests/kernels/fp8mma.wave
  for k in gemm_e5m2 gemm_i8_acc gemm_fp8_cast gemm_i8_cast; do
    echo "$f8 $k - -D M=100 -D N=70 -D K=112"
  done
  for k in gemm_e5m2_sync gemm_i8_acc_sync; do
    echo "$f8 $k - -D M=33 -D N=17 -D K=100"
  done
}

# bench/bench.py: the GEMM tile sweeps at 4096 and 8192, the attention
# sweeps (tiles, waves, stages) at N = 4096 for D = 64 and 128, plain and
# causal, and the default tiles at N = 1024 and 8192.
bench_cases() {
  local n dt cfg
  for n in 4096 8192; do
    for dt in f16 bf16; do
      for cfg in "128 128 64 2 2 2 3" "128 128 64 2 2 3 0" "128 128 32 2 2 4 3"; do
        set -- $cfg
        echo "bench/gemm.wave gemm_$dt stages=$6$( [ "$7" != 0 ] && echo ",workgroups_per_sm=$7") -D M=$n -D N=$n -D K=$n -D BLOCK_M=$1 -D BLOCK_N=$2 -D BLOCK_K=$3 -D WAVES_M=$4 -D WAVES_N=$5"
      done
      for cfg in "128 256 2 3 0" "128 256 2 4 0" "128 128 2 3 2" "128 128 2 4 0" "128 128 1 4 0" \
                 "256 128 2 3 0" "256 128 2 4 0" "256 128 4 3 0" "256 128 4 4 0"; do
        set -- $cfg
        echo "bench/gemm.wave gemm_wgmma_$dt stages=$4$( [ "$5" != 0 ] && echo ",workgroups_per_sm=$5") -D M=$n -D N=$n -D K=$n -D BLOCK_M=$1 -D BLOCK_N=$2 -D WAVES_M=$3"
      done
    done
  done
  local D N B BH c
  for D in 64 128; do
    for N in 1024 4096 8192; do
      B=$((16384 / N)); [ $B -lt 1 ] && B=1
      BH=$((B * (2048 / D)))
      echo "examples/attention_bwd.wave attention_bwd_D - -D B=$BH -D M=$N -D N=$D"
      echo "examples/attention_bwd_wgmma.wave attention_bwd_prep - -D B=$BH -D M=$N -D N=$D"
      echo "examples/attention_bwd_wgmma.wave attention_bwd_dq_scale - -D B=$BH -D M=$N -D K1=$D"
      for c in "" _causal; do
        attn examples/attention_fwd.wave attention_fwd$c - $BH $N $D
        attn examples/attention_fwd_wgmma.wave attention_fwd_wgmma$c - $BH $N $D
        attn examples/attention_bwd.wave attention_bwd_dkdv$c - $BH $N $D
        attn examples/attention_bwd.wave attention_bwd_dq$c - $BH $N $D
        attn examples/attention_bwd_wgmma.wave attention_bwd_dkdv_wgmma$c - $BH $N $D
        attn examples/attention_bwd_wgmma.wave attention_bwd_dq_wgmma$c - $BH $N $D
        [ $N = 4096 ] || continue
        local bm bk w s
        for cfg in "64 64 4" "128 32 8" "128 64 8" "128 32 4" "128 64 4"; do
          set -- $cfg
          for s in 2 3; do
            attn examples/attention_fwd.wave attention_fwd$c stages=$s $BH $N $D -D BLOCK_M=$1 -D BLOCK_K2=$2 -D WAVES=$3
            attn examples/attention_bwd.wave attention_bwd_dq$c stages=$s $BH $N $D -D BLOCK_M=$1 -D BLOCK_K2=$2 -D WAVES=$3
          done
        done
        for cfg in "64 32 4" "128 32 8" "128 64 8" "128 32 4" "64 64 4"; do
          set -- $cfg
          for s in 2 3; do
            attn examples/attention_bwd.wave attention_bwd_dkdv$c stages=$s $BH $N $D -D BLOCK_K2=$1 -D BLOCK_M=$2 -D WAVES=$3
          done
        done
        for cfg in "128 64 2" "128 64 3" "128 64 4" "128 128 2" "128 128 3" "64 128 3" "64 64 3"; do
          set -- $cfg
          attn examples/attention_fwd_wgmma.wave attention_fwd_wgmma$c stages=$3 $BH $N $D -D BLOCK_M=$1 -D BLOCK_K2=$2
        done
        for cfg in "128 64 2" "128 64 3" "128 64 4" "64 64 3" "128 128 2" "64 128 2" "64 128 3"; do
          set -- $cfg
          attn examples/attention_bwd_wgmma.wave attention_bwd_dq_wgmma$c stages=$3 $BH $N $D -D BLOCK_M=$1 -D BLOCK_K2=$2
        done
        for cfg in "128 64 2" "128 64 3" "128 32 3" "128 32 4" "64 64 2" "64 64 3" "64 64 4" "64 128 3"; do
          set -- $cfg
          attn examples/attention_bwd_wgmma.wave attention_bwd_dkdv_wgmma$c stages=$3 $BH $N $D -D BLOCK_K2=$1 -D BLOCK_M=$2
        done
        # the one-pass backward (bench.py's BWD1)
        for cfg in "128 64 2 -" "128 64 2 specialize=0" "128 64 2 specialize=1" "128 64 3 specialize=0" "64 64 2 -" \
                   "128 64 2 sum_parts=0" "128 64 2 adds=2" "128 64 2 specialize=0,adds=2"; do
          set -- $cfg
          local h=$4; [ "$h" = - ] && h="" || h=",$h"
          attn examples/attention_bwd_wgmma.wave attention_bwd_fused_wgmma$c stages=$3$h $BH $N $D -D BLOCK_K2=$1 -D BLOCK_M=$2
        done
        # the schedule knobs (bench.py's TURNS, FA3_FWD, FA3_BWD)
        local sch
        for sch in "" ,pingpong=1 ,overlap=1 ,overlap=1,pingpong=1 ,persistent=1,overlap=1,pingpong=1; do
          attn examples/attention_fwd_wgmma.wave attention_fwd_wgmma$c specialize=1,stages=3$sch $BH $N $D -D BLOCK_M=128 -D BLOCK_K2=128
          attn examples/attention_bwd_wgmma.wave attention_bwd_dkdv_wgmma$c specialize=1,stages=3$sch $BH $N $D -D BLOCK_K2=128 -D BLOCK_M=64
          attn examples/attention_bwd_wgmma.wave attention_bwd_dq_wgmma$c specialize=1,stages=3$sch $BH $N $D -D BLOCK_M=128 -D BLOCK_K2=64
        done
      done
    done
  done
}

# tools/demo.c
demo_cases() {
  echo "examples/gemm.wave gemm - -D M=256 -D N=256 -D K=128"
  local n hw c
  for n in 16 32 64; do
    for hw in $MF $NV; do
      echo "examples/attention_bwd_dkdv.wave attention_bwd_dkdv $hw -D B=1 -D M=64 -D K2=64 -D N=$n -D K1=$n"
    done
  done
  for c in "" _causal; do
    attn examples/attention_fwd.wave attention_fwd$c - 2 128 64
    attn examples/attention_bwd.wave attention_bwd_dkdv$c - 2 128 64
    attn examples/attention_bwd.wave attention_bwd_dq$c - 2 128 64
  done
  echo "examples/gemm_wgmma.wave gemm_wgmma - -D M=256 -D N=256 -D K=128"
  attn examples/attention_fwd_wgmma.wave attention_fwd_wgmma - 2 128 64
  attn examples/attention_fwd_wgmma.wave attention_fwd_wgmma_causal - 2 256 128
  for c in "" _causal; do
    attn examples/attention_bwd_wgmma.wave attention_bwd_dkdv_wgmma$c - 2 128 64
    attn examples/attention_bwd_wgmma.wave attention_bwd_dq_wgmma$c - 2 128 64
  done
  attn examples/attention_bwd_wgmma.wave attention_bwd_dkdv_wgmma_causal - 2 256 128
  attn examples/attention_bwd_wgmma.wave attention_bwd_dq_wgmma_causal - 2 256 128
}

all_cases() { { test_cases; demo_cases; bench_cases; } | sed 's/ *$//' | awk '!seen[$0]++'; }

# The words of a case as wavec arguments (without the command).
case_args() { # FILE KERNEL HW DEFS...
  local f=$1 k=$2 hw=$3
  shift 3
  printf '%s\n' "$f" --kernel "$k"
  [ "$hw" != - ] && printf '%s\n' --hardware "$hw"
  [ $# -gt 0 ] && printf '%s\n' "$@"
  return 0
}

# A file name for a case: its words joined by '_', '/' and ',' made '+'.
case_name() { echo "$*" | sed 's/ -D / /g; s/[ ]\+/_/g; s/[\/,]/+/g; s/=//g'; }

one_case() { # OUTDIR WAVEC CASE...
  local out=$1 wavec=$2
  shift 2
  local name args t
  name=$(case_name "$@")
  mapfile -t args < <(case_args "$@")
  "$wavec" compile "${args[@]}" --remarks >"$out/$name.tir" 2>"$out/$name.remarks"
  echo "exit $?" >>"$out/$name.remarks"
  for t in sm_80 sm_90 sm_90a; do
    "$wavec" compile "${args[@]}" --emit=ptx --target=$t >"$out/$name.$t.ptx" 2>"$out/$name.$t.err"
    echo "exit $?" >>"$out/$name.$t.err"
  done
}

if [ "${1:-}" = --list ]; then
  all_cases
  exit 0
fi

if [ "${1:-}" = --time ]; then
  wavec=${2:-build/release/wavec}
  reps=${3:-5}
  # per case and pass the fastest of reps runs, then summed over the cases
  bench_cases | sed 's/ *$//' | awk '!seen[$0]++' | while read -r line; do
    # shellcheck disable=SC2086
    set -- $line
    mapfile -t args < <(case_args "$@")
    t=sm_90; [[ $2 == *wgmma* ]] && t=sm_90a
    for ((r = 0; r < reps; r++)); do
      "$wavec" compile "${args[@]}" --emit=ptx --target=$t --time 2>&1 >/dev/null |
        sed -n "s/^time \([a-z]*\) *\([0-9.]*\) ms$/$r \1 \2/p"
    done | awk -v c="$line" '{ k = $2; if (!(k in m) || $3 < m[k]) m[k] = $3; if (!(k in o)) o[k] = n++ }
      END { for (k in m) print o[k], k, m[k] }'
  done | awk '{ s[$2] += $3; if (!($2 in o)) { o[$2] = $1; names[$1] = $2 } }
    END { for (i = 0; i in names; i++) printf "time %-12s %10.3f ms\n", names[i], s[names[i]] }'
  exit 0
fi

out=${1:?usage: tools/snapshot.sh OUTDIR [WAVEC] | --time [WAVEC] [N] | --list}
wavec=${2:-build/release/wavec}
[ -x "$wavec" ] || { echo "snapshot: $wavec is not built" >&2; exit 2; }
mkdir -p "$out"
export -f one_case case_args case_name
# shellcheck disable=SC2016
all_cases | xargs -P 2 -d '\n' -n 1 bash -c 'one_case "$0" "$1" $2' "$out" "$wavec"
echo "snapshot: $(all_cases | wc -l) cases in $out"
