#!/usr/bin/env bash
# Fourteenth session, second call: the forward's GPU cases under its new
# defaults (tiles from the head dim and key length, 2 stages): every
# "wgmma fwd" case and the three "defaults" cases at 2048 keys, against
# the simulator and under compute-sanitizer.
. bench/device_env.sh
build_release
gpu_cases "${GPU_CASES-defaults,wgmma fwd}" "${GPU_S:-200}" 30
