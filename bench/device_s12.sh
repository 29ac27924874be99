#!/usr/bin/env bash
# Twelfth session's short A/B (the device time left was about 4 minutes):
# the one-pass backward at D = 64, N = 4096, the default against
# hardware(mma_ahead = 2) and (mma_ahead = 1, read_ahead = 0), in one
# process beside SDPA-cuDNN; then two GPU runs against the simulator
# (--compare sim). No build on the device: carry build/carry, holding
# the release libwavec.so and wavec built here:
#   mkdir -p build/carry && cp build/release/libwavec.so build/release/wavec build/carry/
export PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:-build/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
WAVEC_LIB=build/carry/libwavec.so WAVEC=build/carry/wavec WV_BWD1_D=${D:-64} WV_BWD1_N=${N:-4096} \
  timeout ${BWD_S:-150} python3 -c "
import sys; sys.path.insert(0, 'bench'); import bench
bench.bwd_one_pass(True, [(128, 64, 2, {}), (128, 64, 2, dict(mma_ahead=2)),
                          (128, 64, 2, dict(mma_ahead=1, read_ahead=0))])" >"$OUT/log-bwd1-ahead.txt" 2>&1
echo "bwd1 rc=$?"; grep -E "^bwd1|FAIL|Error" "$OUT/log-bwd1-ahead.txt" | cut -c1-240 |
  sed -E 's/^bwd1 attn bwd one-pass f16 //'
for hw in stages=2,mma_ahead=2 stages=3,mma_ahead=1,read_ahead=0; do
  timeout 40 build/carry/wavec run examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma_causal \
    -D B=1 -D M=200 -D K2=200 -D N=64 -D K1=64 --hardware $hw --target sm_90a --compare sim >"$OUT/cmp.txt" 2>&1
  echo "compare $hw rc=$?"; tail -2 "$OUT/cmp.txt" | cut -c1-220
done
