#!/usr/bin/env bash
# Eleventh session's measurement: the one-pass backward against the
# library before the session (build/base, a96f5c8, carried), each row
# beside SDPA-cuDNN in its own process (WV_BWD1_N: the sequence lengths);
# rows for D = 64 with 128-query tiles (wide, widespec), lse ahead at
# D = 128 (ra16), prep and dq_scale one element of a row a lane (aux32,
# bench/bwd_aux_lanes32.wave); then the GPU cases (with memcheck,
# racecheck, synccheck); last, optionally, ncu's PC samples split by role.
#
# Before the call, on the CPU machine (build/ is not committed):
#   git worktree add /tmp/wv-base a96f5c8 && make -C /tmp/wv-base -s MODE=release lib
#   mkdir -p build/base && cp /tmp/wv-base/build/release/libwavec.so build/base/
# and call with carry ["build/base"]. Rows: base, new, spec, xchg, ra0 /
# ra1 / ra16 (hardware(read_ahead = 0 / 1 / 16)), aux32, wide, widespec,
# st3 (D = 64 in 3 stages: what a kernel without hardware(stages) gets;
# the rows above pass stages = 2).
# Knobs: ROWS (bwd rows), BWD_D, WV_BWD1_N, GPU_CASES (patterns,
# comma-separated; empty: none), PROF (empty: no profile), the timeouts
# BWD_S, GPU_S, PROF_S.
. bench/device_env.sh
NEW=build/release/libwavec.so
build_release
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
CFGS="[(128, 64, 2, {})]"
bwd() { for row in "$@"; do
  L=$NEW; D=${BWD_D:-128,64}; C=$CFGS; AUXF=examples/attention_bwd_wgmma.wave
  case $row in
    base) L=build/base/libwavec.so ;;
    spec) D=64; C="[(128, 64, 2, dict(specialize=1))]" ;;
    xchg) D=64; C="[(128, 64, 2, dict(exchange=1))]" ;;
    ra0) C="[(128, 64, 2, dict(read_ahead=0))]" ;;
    ra1) C="[(128, 64, 2, dict(read_ahead=1))]" ;;
    ra16) D=128; C="[(128, 64, 2, dict(read_ahead=16))]" ;;
    aux32) AUXF=bench/bwd_aux_lanes32.wave ;;
    st3) D=64; C="[(128, 64, 3, {})]" ;;
    wide) D=64; C="[(128, 128, 2, {})]" ;;
    widespec) D=64; C="[(128, 128, 2, dict(specialize=1))]" ;;
    ah1) D=64; C="[(128, 64, 2, dict(mma_ahead=1, read_ahead=0))]" ;;
    ah2) D=64; C="[(128, 64, 2, dict(mma_ahead=2))]" ;;
    ah2st3) D=64; C="[(128, 64, 3, dict(mma_ahead=2))]" ;;
    ra0d64) D=64; C="[(128, 64, 2, dict(read_ahead=0))]" ;;
  esac
  WAVEC_LIB=$L WV_BWD1_D=$D WV_BWD1_AUX=$AUXF timeout ${BWD_S:-150} python3 -c "
import sys; sys.path.insert(0, 'bench'); import bench
bench.bwd_one_pass(True, $C)" >"$OUT/log-bwd1-$row.txt" 2>&1
  echo "bwd1 $row rc=$?"; grep -E "^bwd1|FAIL|Error" "$OUT/log-bwd1-$row.txt" | cut -c1-220 |
    sed -E 's/^bwd1 attn bwd one-pass f16 //; s/ \(fused kernel alone/ (fused/; s/; 168 regs, 0 B spill//'
done; }
bwd ${ROWS-new wide widespec}
gpu_cases "${GPU_CASES-bwd1 wgmma fused}" "${GPU_S:-200}" 12
for d in ${PROF:+${PROF_D:-128}}; do
  WAVEC_LIB=$NEW WV_PROF_D=$d WV_PROFILE_ONLY=$PROF timeout ${PROF_S:-150} python3 bench/profile_bwd1.py "$TMPO/prof$d" \
    >"$OUT/prof-bwd1-d$d.txt" 2>&1
  echo "profile D=$d rc=$?"; grep -E "^===|^by opcode|^by role" "$OUT/prof-bwd1-d$d.txt" | cut -c1-400
  for f in "$TMPO/prof$d"/src-*.csv; do [ -f "$f" ] && gzip -c "$f" >"$OUT/d$d-$(basename "$f").gz"; done
done
