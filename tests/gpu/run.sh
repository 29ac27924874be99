#!/usr/bin/env bash
# The GPU check. Needs an NVIDIA GPU of compute capability 8.0 or newer, its
# driver, and the CUDA toolkit's compute-sanitizer (the CPU tests need none
# of these). From the repository root:
#   1. builds the release wavec (make MODE=release) and tests/gpu/ops.c;
#   2. ops: every thread-program operation on the GPU against the simulator
#      (exact, or within a few ulp for the transcendentals);
#   3. every example kernel, and the benchmark GEMMs, at small sizes with
#      `wavec run --target sm_90 --compare sim`: every output of the GPU run
#      against the simulator's (normwise relative error at most 1e-3, no NaN
#      or inf that only one of them has; outputs start poisoned, so an
#      element the GPU leaves unwritten fails);
#   4. compute-sanitizer memcheck, racecheck and synccheck on each of those
#      runs;
#   5. ragged sizes (tests/gpu/ragged.c): the examples at sizes their tiles
#      do not divide, up to GEMM 4097x4095x1000 and attention over 4095
#      tokens, and the kernels with run-time sizes (tests/kernels/
#      dynamic.wave) compiled once and run at all of them, against float64
#      references; under memcheck up to size 100;
#   6. fp8 and int8 GEMMs (tests/gpu/fp8mma.c): the wgmma and mma.sync
#      kernels of examples/gemm_fp8.wave and gemm_i8.wave, ragged and up to
#      4097x4095x1008, against float64 and int64 references (int8
#      bit-exact, s32 sums wrapping); under memcheck up to size 256;
#   7. tensors of more than 2^31 elements (tests/gpu/large.c): GEMMs with
#      an output of 2^31 + 2^22 elements (mma.sync, warpgroup, run-time
#      sizes) and an elementwise kernel of 2^31 + 4096, checked element by
#      element, and under memcheck (about 17 GB of GPU and host memory);
#   8. one large GEMM, timed only.
# Prints a table last; exit status 0 when everything passed.
# Usage: tests/gpu/run.sh [--quick] [PATTERN]   (--quick: no sanitizers;
# PATTERN: only the cases whose name contains it, and no ops table;
# GPU_SKIP="large ..." leaves out steps 5-7 by name: ragged, fp8, large)
# Full logs go to build/gpu, and all of them in one file to $OUT/gpu-logs.txt
# when OUT is set (the device machine's output folder).
set -u
cd "$(dirname "$0")/../.."
quick=0
[ "${1:-}" = "--quick" ] && { quick=1; shift; }
only=${1:-}
LOG=build/gpu
rm -rf "$LOG"
mkdir -p "$LOG"
W=build/release/wavec
NV="--hardware threads_per_wave=32,mma=F32_16x8x16_F16"
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
san() { timeout 90 "$SAN" "$@"; } # a hung or very slow tool run fails

if ! make MODE=release -j"$(nproc)" >"$LOG/build.log" 2>&1; then
  tail -30 "$LOG/build.log"; echo "build failed"; exit 1
fi
for prog in ops ragged fp8mma large; do
  cc -std=c17 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -Wshadow -Iinclude -Isrc -O2 \
    tests/gpu/$prog.c build/release/wavec-internal.a -lm -ldl -o build/release/gpu_$prog \
    >>"$LOG/build.log" 2>&1 || { tail -30 "$LOG/build.log"; echo "$prog build failed"; exit 1; }
done
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'

# name | wavec arguments [| target, default sm_90 [| tolerance of the
# comparison, default wavec's 1e-3]]. Hopper's fp8 wgmma accumulates in
# fewer bits than f32 (the H200 gave 1.2e-3 against the simulator's f32 sums
# at K = 512..640, and torch._scaled_mm's error against float64 is the same
# as wavec's at 8192^3): those cases allow 5e-3
cases=(
  "gemm 128x128x64|examples/gemm.wave -D M=128 -D N=128 -D K=64"
  "gemm 256x192x160|examples/gemm.wave -D M=256 -D N=192 -D K=160"
  "gemm 192x96x96 tiles 96x48|examples/gemm.wave -D M=192 -D N=96 -D K=96 -D BLOCK_M=96 -D BLOCK_N=48"
  "dkdv B1 32/32/32/32|examples/attention_bwd_dkdv.wave $NV -D B=1 -D M=32 -D K2=32 -D N=32 -D K1=32"
  "dkdv B2 64/128/64/32|examples/attention_bwd_dkdv.wave $NV -D B=2 -D M=64 -D K2=128 -D N=64 -D K1=32"
  "fwd B1 64/32|examples/attention_fwd.wave --kernel attention_fwd -D B=1 -D M=64 -D K2=64 -D N=32 -D K1=32"
  "fwd B2 128/64|examples/attention_fwd.wave --kernel attention_fwd -D B=2 -D M=128 -D K2=128 -D N=64 -D K1=64"
  "fwd_causal B1 64/32|examples/attention_fwd.wave --kernel attention_fwd_causal -D B=1 -D M=64 -D K2=64 -D N=32 -D K1=32"
  "fwd_causal B2 128/64|examples/attention_fwd.wave --kernel attention_fwd_causal -D B=2 -D M=128 -D K2=128 -D N=64 -D K1=64"
  # sums whose lanes hold copies (tiles of 7, 20 and waves of 10 over 32
  # lanes): each copy counted once (the lane masks' shr.b32)
  "copies sum_copies 8/17|tests/kernels/regress.wave --kernel sum_copies -D M=8 -D N=17"
  "copies sum_copies_tiled 8/100 T=20|tests/kernels/regress.wave --kernel sum_copies_tiled -D M=8 -D N=100 -D T=20"
  "copies softmax_copies 4/30 WN=10|tests/kernels/regress.wave --kernel softmax_copies -D M=4 -D N=30"
  # grouped-query attention: key/value head h // G staged (tensor copies on
  # warpgroups, cp.async on mma.sync); an mma added into c with M at run
  # time (64-bit offsets, pair adds)
  "gqa wgmma B1 H8/2 256/64|tests/kernels/gqa.wave --kernel attention_gqa_wgmma -D B=1 -D H=8 -D HK=2 -D M=256 -D K2=256 -D K1=64 -D N=64|sm_90a"
  "gqa wgmma B2 H4/2 200/128 spec+pers|tests/kernels/gqa.wave --kernel attention_gqa_wgmma -D B=2 -D H=4 -D HK=2 -D G=2 -D M=200 -D K2=200 -D K1=128 -D N=128 --hardware specialize=1,persistent=1,sms=3|sm_90a"
  "gqa B1 H6/3 77/64|tests/kernels/gqa.wave --kernel attention_gqa -D B=1 -D H=6 -D HK=3 -D G=2 -D M=77 -D K2=77 -D K1=64 -D N=64"
  "dynamic gemm_add 77x64x32|tests/kernels/dynamic.wave --kernel gemm_add_dyn -D M=77"
  "dynamic decode causal 16/200|tests/kernels/dynamic.wave --kernel attention_decode_dyn -D B=1 -D M=16 -D K2=200 -D N=64 -D K1=64 -D BLOCK_M=16 -D WAVES=1"
  # longest walks first: the causal forward's query tiles in reverse, and
  # in order (longest_first=0)
  "fwd_causal B2 300/64 in order|examples/attention_fwd.wave --kernel attention_fwd_causal -D B=2 -D M=300 -D K2=300 -D N=64 -D K1=64 --hardware longest_first=0"
  "gemm 128x128x256 stages=1|examples/gemm.wave -D M=128 -D N=128 -D K=256 --hardware stages=1"
  "gemm 128x128x256 stages=2|examples/gemm.wave -D M=128 -D N=128 -D K=256 --hardware stages=2"
  "gemm 128x128x256 stages=4|examples/gemm.wave -D M=128 -D N=128 -D K=256 --hardware stages=4"
  "fwd B1 256/64 128x32 8 waves|examples/attention_fwd.wave --kernel attention_fwd -D B=1 -D M=256 -D K2=256 -D N=64 -D K1=64 -D BLOCK_M=128 -D WAVES=8"
  "wgmma gemm 128x128x64|examples/gemm_wgmma.wave -D M=128 -D N=128 -D K=64|sm_90a"
  "wgmma gemm_tn 200x136x192 (lhs M-contiguous)|tests/kernels/layouts.wave --kernel gemm_tn -D M=200 -D N=136 -D K=192|sm_90a"
  "wgmma gemm_tt 256x128x192 spec (both transposed)|tests/kernels/layouts.wave --kernel gemm_tt -D M=256 -D N=128 -D K=192 --hardware stages=3,specialize=1|sm_90a"
  "wgmma gemm 256x256x320|examples/gemm_wgmma.wave -D M=256 -D N=256 -D K=320|sm_90a"
  # 64- and 32-byte swizzles (tests/kernels/swizzle.wave): K tiles of 32
  # and 48, N-contiguous N tiles of 96 and 80, fp8 K tiles of 32 bytes,
  # the cp.async ring's own XOR; attention at head dims 96, 80 and 48
  "swz64 wgmma gemm_nt 200x136x208 K tile 32|tests/kernels/swizzle.wave --kernel gemm_nt -D M=200 -D N=136 -D K=208 -D BLOCK_K=32|sm_90a"
  "swz32 wgmma gemm_nt 256x128x192 K tile 48 spec|tests/kernels/swizzle.wave --kernel gemm_nt -D M=256 -D N=128 -D K=192 -D BLOCK_K=48 --hardware stages=3,specialize=1|sm_90a"
  "swz64 wgmma gemm_nn 200x200x192 N tile 96|tests/kernels/swizzle.wave --kernel gemm_nn -D M=200 -D N=200 -D K=192 -D BLOCK_N=96|sm_90a"
  "swz32 wgmma gemm_nn 128x160x128 N tile 80 cp.async|tests/kernels/swizzle.wave --kernel gemm_nn -D M=128 -D N=160 -D K=128 -D BLOCK_N=80 --hardware copies=1|sm_90a"
  "swz32 wgmma gemm_fp8_nt 200x136x208 K tile 32|tests/kernels/swizzle.wave --kernel gemm_fp8_nt -D M=200 -D N=136 -D K=208 -D BLOCK_K=32|sm_90a|5e-3"
  "swz64 wgmma fwd B2 300/96|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma -D B=2 -D M=300 -D K2=300 -D N=96 -D K1=96|sm_90a"
  "swz32 wgmma fwd_causal B2 256/80|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma_causal -D B=2 -D M=256 -D K2=256 -D N=80 -D K1=80|sm_90a"
  "swz64 bwd1 wgmma fused_causal B1 200/96 ragged|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma_causal -D B=1 -D M=200 -D K2=200 -D N=96 -D K1=96|sm_90a"
  "swz32 bwd1 wgmma fused B2 256/48|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma -D B=2 -D M=256 -D K2=256 -D N=48 -D K1=48|sm_90a"
  "swz64 gqa wgmma B1 H4/2 200/96|tests/kernels/gqa.wave --kernel attention_gqa_wgmma -D B=1 -D H=4 -D HK=2 -D G=2 -D M=200 -D K2=200 -D K1=96 -D N=96|sm_90a"
  "swz32 bwd1 prep B2 200/80 (vectors of 16 columns)|examples/attention_bwd_wgmma.wave --kernel attention_bwd_prep -D B=2 -D M=200 -D N=80"
  "narrow4 wgmma gemm_nt 200x136x66 (4-byte copies)|tests/kernels/swizzle.wave --kernel gemm_nt -D M=200 -D N=136 -D K=66 -D BLOCK_K=64|sm_90a"
  "narrow8 wgmma gemm_nn 130x100x200 (b 8-byte copies) stages=3|tests/kernels/swizzle.wave --kernel gemm_nn -D M=130 -D N=100 -D K=200 -D BLOCK_N=64 --hardware stages=3|sm_90a"
  "narrow4 wgmma gemm_fp8_nt 130x128x52|tests/kernels/swizzle.wave --kernel gemm_fp8_nt -D M=130 -D N=128 -D K=52|sm_90a|5e-3"
  "narrow4 wgmma gemm_wgmma_dyn 130x72x98 (K at run time)|tests/kernels/swizzle.wave --kernel gemm_wgmma_dyn -D M=130 -D N=72 -D K=98|sm_90a"
  "narrow1 wgmma gemm_nt 130x100x101 (element copies, lhs in registers)|tests/kernels/swizzle.wave --kernel gemm_nt -D M=130 -D N=100 -D K=101 -D BLOCK_K=64|sm_90a"
  "narrow1 wgmma gemm_fp8_nt 128x70x45 (element copies)|tests/kernels/swizzle.wave --kernel gemm_fp8_nt -D M=128 -D N=70 -D K=45|sm_90a|5e-3"
  "narrow1 wgmma gemm_wgmma_dyn_any 130x72x101 (K at run time, nothing stated)|tests/kernels/swizzle.wave --kernel gemm_wgmma_dyn_any -D M=130 -D N=72 -D K=101|sm_90a"
  "defaults wgmma fwd B1 2048/128 (192x128 tiles, specialized)|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma -D B=1 -D M=2048 -D K2=2048 -D N=128 -D K1=128|sm_90a"
  "defaults wgmma fwd_causal B2 2048/96 (192x128 tiles)|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma_causal -D B=2 -D M=2048 -D K2=2048 -D N=96 -D K1=96|sm_90a"
  "defaults wgmma fwd_causal B1 2100/64 (128x128 tiles, ragged)|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma_causal -D B=1 -D M=2100 -D K2=2100 -D N=64 -D K1=64|sm_90a"
  "defaults gemm bf16 1000x1100x1000 (4 stages chosen, ragged, persistent)|bench/gemm.wave --kernel gemm_wgmma_bf16 -D M=1000 -D N=1100 -D K=1000 --hardware sms=5|sm_90a"
  "defaults gemm bf16 tn 384x640x4104 (4 stages chosen)|bench/gemm.wave --kernel gemm_wgmma_bf16_tn -D M=384 -D N=640 -D K=4104|sm_90a"
  "defaults wgmma fwd B1 130/40 (head dim 40 padded to 48)|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma -D B=1 -D M=130 -D K2=130 -D N=40 -D K1=40|sm_90a"
  "defaults wgmma bwd fused causal B1 128/72 (head dim 72 padded to 80)|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma_causal -D B=1 -D M=128 -D K2=128 -D N=72 -D K1=72|sm_90a"
  "defaults wgmma causal bottom-right 300/1000 (bounded walk with an offset, split)|tests/kernels/causal_br.wave --kernel causal_br_wgmma -D B=1 -D M=300 -D K2=1000 -D N=64 -D K1=64|sm_90a"
  "defaults wgmma bwd fused D=256 (one ring slot, refit)|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma -D B=1 -D M=128 -D K2=128 -D N=256 -D K1=256|sm_90a"
  "whole rows softmax 33x1000 (N padded to 1024)|tests/kernels/ragged.wave --kernel row_softmax -D M=33 -D N=1000"
  "whole rows layer_norm 37x777 (N padded to 800)|tests/kernels/ragged.wave --kernel layer_norm -D M=37 -D N=777"
  "wgmma gemm 128x256x256 N=64|examples/gemm_wgmma.wave -D M=128 -D N=256 -D K=256 -D BLOCK_N=64|sm_90a"
  "wgmma gemm 256x256x128 64x256|examples/gemm_wgmma.wave -D M=256 -D N=256 -D K=128 -D BLOCK_M=64 -D BLOCK_N=256|sm_90a"
  "cluster2 wgmma gemm 512x200x96 plain|examples/gemm_wgmma.wave -D M=512 -D N=200 -D K=96 --hardware cluster=2,stages=3|sm_90a"
  "cluster2 wgmma gemm 1024x384x256 spec+pers sms=5|examples/gemm_wgmma.wave -D M=1024 -D N=384 -D K=256 --hardware cluster=2,specialize=1,persistent=1,sms=5|sm_90a"
  "cluster4 wgmma gemm 1024x256x192 spec|examples/gemm_wgmma.wave -D M=1024 -D N=256 -D K=192 --hardware cluster=4,specialize=1,stages=2|sm_90a"
  "cluster2 bench gemm bf16 512x520x128 128x256 spec+pers|bench/gemm.wave --kernel gemm_wgmma_bf16 -D M=512 -D N=520 -D K=128 -D BLOCK_M=128 -D BLOCK_N=256 -D WAVES_M=2 --hardware cluster=2,specialize=1,persistent=1,sms=3,stages=4|sm_90a"
  "cluster2 wgmma fwd B2 256/200 spec|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma -D B=2 -D M=256 -D K2=200 -D N=64 -D K1=64 --hardware cluster=2,specialize=1|sm_90a"
  "wgmma gemm 128x128x256 stages=1|examples/gemm_wgmma.wave -D M=128 -D N=128 -D K=256 --hardware stages=1|sm_90a"
  "wgmma gemm 128x128x512 stages=4|examples/gemm_wgmma.wave -D M=128 -D N=128 -D K=512 --hardware stages=4|sm_90a"
  "wgmma fwd B1 128/64|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma -D B=1 -D M=128 -D K2=128 -D N=64 -D K1=64|sm_90a"
  "wgmma fwd B2 256/128 K2 tile 128|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma -D B=2 -D M=256 -D K2=256 -D N=128 -D K1=128 -D BLOCK_K2=128|sm_90a"
  "wgmma fwd_causal B2 256/128|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma_causal -D B=2 -D M=256 -D K2=256 -D N=128 -D K1=128|sm_90a"
  "wgmma fwd_causal B1 256/64 64 rows|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma_causal -D B=1 -D M=256 -D K2=256 -D N=64 -D K1=64 -D BLOCK_M=64|sm_90a"
  "wgmma dkdv B1 128/64|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dkdv_wgmma -D B=1 -D M=128 -D K2=128 -D N=64 -D K1=64|sm_90a"
  "wgmma dq B1 128/64|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dq_wgmma -D B=1 -D M=128 -D K2=128 -D N=64 -D K1=64|sm_90a"
  "wgmma dkdv B2 256/128 64 keys 32 rows 3 stages|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dkdv_wgmma -D B=2 -D M=256 -D K2=256 -D N=128 -D K1=128 -D BLOCK_K2=64 -D BLOCK_M=32 --hardware stages=3|sm_90a"
  "wgmma dq B2 256/128 K2 tile 128|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dq_wgmma -D B=2 -D M=256 -D K2=256 -D N=128 -D K1=128 -D BLOCK_K2=128|sm_90a"
  "wgmma dkdv_causal B2 256/128|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dkdv_wgmma_causal -D B=2 -D M=256 -D K2=256 -D N=128 -D K1=128|sm_90a"
  "wgmma dq_causal B2 256/128|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dq_wgmma_causal -D B=2 -D M=256 -D K2=256 -D N=128 -D K1=128|sm_90a"
  # the rings above are tensor copies into mbarrier rings (TMA); the same
  # kernels with cp.async rings, and TMA rings at their edges (2 slots,
  # boxes of 256 rows, 3-dim tensor maps, a walk from a workgroup's tile)
  "wgmma gemm 256x256x320 copies=1|examples/gemm_wgmma.wave -D M=256 -D N=256 -D K=320 --hardware copies=1|sm_90a"
  "wgmma fwd_causal B2 256/128 copies=1|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma_causal -D B=2 -D M=256 -D K2=256 -D N=128 -D K1=128 --hardware copies=1|sm_90a"
  "wgmma dkdv_causal B2 256/128 copies=1|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dkdv_wgmma_causal -D B=2 -D M=256 -D K2=256 -D N=128 -D K1=128 --hardware copies=1|sm_90a"
  "wgmma gemm 256x512x640 tma stages=2|examples/gemm_wgmma.wave -D M=256 -D N=512 -D K=640 --hardware stages=2|sm_90a"
  "wgmma gemm 256x512x640 tma 128x256 stages=4|examples/gemm_wgmma.wave -D M=256 -D N=512 -D K=640 -D BLOCK_N=256 --hardware stages=4|sm_90a"
  "wgmma fwd B2 512/64 tma stages=4|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma -D B=2 -D M=512 -D K2=512 -D N=64 -D K1=64 --hardware stages=4|sm_90a"
  "wgmma dkdv_causal B1 512/64 tma stages=2|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dkdv_wgmma_causal -D B=1 -D M=512 -D K2=512 -D N=64 -D K1=64 --hardware stages=2|sm_90a"
  "ragged gemm 17x33x100|examples/gemm.wave -D M=17 -D N=33 -D K=100"
  "ragged gemm 129x250x40|examples/gemm.wave -D M=129 -D N=250 -D K=40"
  "ragged wgmma gemm 200x72x96|examples/gemm_wgmma.wave -D M=200 -D N=72 -D K=96|sm_90a"
  "ragged wgmma gemm 129x250x40 copies=1|examples/gemm_wgmma.wave -D M=129 -D N=250 -D K=40 --hardware copies=1|sm_90a"
  "ragged fwd_causal 77/64|examples/attention_fwd.wave --kernel attention_fwd_causal -D B=1 -D M=77 -D K2=77 -D N=64 -D K1=64"
  "ragged wgmma fwd 100/64|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma -D B=1 -D M=100 -D K2=100 -D N=64 -D K1=64|sm_90a"
  "ragged wgmma dkdv_causal 77/64|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dkdv_wgmma_causal -D B=1 -D M=77 -D K2=77 -D N=64 -D K1=64|sm_90a"
  "dynamic gemm 129x250x40|tests/kernels/dynamic.wave --kernel gemm_dyn -D M=129 -D N=250 -D K=40"
  "dynamic wgmma gemm 200x72x128|tests/kernels/dynamic.wave --kernel gemm_dyn_wgmma -D M=200 -D N=72 -D K=128|sm_90a"
  "dynamic fwd_causal 77/64|tests/kernels/dynamic.wave --kernel attention_fwd_dyn_causal -D B=1 -D M=77 -D K2=77 -D N=64 -D K1=64"
  "ragged wgmma dq 100/64|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dq_wgmma -D B=1 -D M=100 -D K2=100 -D N=64 -D K1=64|sm_90a"
  # 8-bit mma: wgmma (sm_90a) and mma.sync m16n8k32 (sm_90 PTX here)
  "fp8 wgmma gemm 256x256x512|examples/gemm_fp8.wave --kernel gemm_fp8 -D M=256 -D N=256 -D K=512|sm_90a|5e-3"
  "fp8 wgmma gemm 200x72x96|examples/gemm_fp8.wave --kernel gemm_fp8 -D M=200 -D N=72 -D K=96|sm_90a|5e-3"
  "fp8 wgmma gemm 256x512x640 128x256 stages=4|examples/gemm_fp8.wave --kernel gemm_fp8 -D M=256 -D N=512 -D K=640 -D BLOCK_N=256 --hardware stages=4|sm_90a|5e-3"
  "fp8 wgmma gemm 256x256x512 copies=1|examples/gemm_fp8.wave --kernel gemm_fp8 -D M=256 -D N=256 -D K=512 --hardware copies=1|sm_90a|5e-3"
  "fp8 mma.sync gemm 128x128x256|examples/gemm_fp8.wave --kernel gemm_fp8_sync -D M=128 -D N=128 -D K=256"
  "fp8 mma.sync gemm 17x33x100|examples/gemm_fp8.wave --kernel gemm_fp8_sync -D M=17 -D N=33 -D K=100"
  "e5m2 wgmma gemm 128x128x256|tests/kernels/fp8mma.wave --kernel gemm_e5m2 -D M=128 -D N=128 -D K=256|sm_90a|5e-3"
  "e5m2 mma.sync gemm 64x64x128|tests/kernels/fp8mma.wave --kernel gemm_e5m2_sync -D M=64 -D N=64 -D K=128"
  "fp8 wgmma register lhs 128x128x256|tests/kernels/fp8mma.wave --kernel gemm_fp8_cast -D M=128 -D N=128 -D K=256|sm_90a|5e-3"
  "i8 wgmma gemm 256x256x512|examples/gemm_i8.wave --kernel gemm_i8 -D M=256 -D N=256 -D K=512|sm_90a"
  "i8 wgmma gemm 129x250x48|examples/gemm_i8.wave --kernel gemm_i8 -D M=129 -D N=250 -D K=48|sm_90a"
  "i8 mma.sync gemm 128x128x256|examples/gemm_i8.wave --kernel gemm_i8_sync -D M=128 -D N=128 -D K=256"
  "i8 mma.sync gemm 17x33x100|examples/gemm_i8.wave --kernel gemm_i8_sync -D M=17 -D N=33 -D K=100"
  "i8 wgmma register lhs 128x128x256|tests/kernels/fp8mma.wave --kernel gemm_i8_cast -D M=128 -D N=128 -D K=256|sm_90a"
  # the schedule: warp specialization, persistent tiles (sms small, so that
  # workgroups loop over tiles and the rings' phases run on across them)
  "sched wgmma gemm 256x512x640 specialize|examples/gemm_wgmma.wave -D M=256 -D N=512 -D K=640 --hardware specialize=1|sm_90a"
  "sched wgmma gemm 256x512x640 spec stages=4|examples/gemm_wgmma.wave -D M=256 -D N=512 -D K=640 --hardware specialize=1,stages=4|sm_90a"
  "sched wgmma gemm 384x640x256 persistent|examples/gemm_wgmma.wave -D M=384 -D N=640 -D K=256 --hardware persistent=1,sms=3|sm_90a"
  "sched wgmma gemm 384x640x256 spec+persistent|examples/gemm_wgmma.wave -D M=384 -D N=640 -D K=256 --hardware persistent=1,sms=3,specialize=1,stages=4|sm_90a"
  "sched ragged wgmma gemm 200x72x96 spec+pers|examples/gemm_wgmma.wave -D M=200 -D N=72 -D K=96 --hardware persistent=1,sms=2,specialize=1|sm_90a"
  "sched wgmma fwd_causal B2 256/128 spec+pers|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma_causal -D B=2 -D M=256 -D K2=256 -D N=128 -D K1=128 --hardware specialize=1,persistent=1,sms=3|sm_90a"
  "sched wgmma fwd B1 512/64 specialize|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma -D B=1 -D M=512 -D K2=512 -D N=64 -D K1=64 --hardware specialize=1|sm_90a"
  "sched dynamic wgmma gemm 200x72x128 spec+pers|tests/kernels/dynamic.wave --kernel gemm_dyn_wgmma -D M=200 -D N=72 -D K=128 --hardware specialize=1,persistent=1,sms=3|sm_90a"
  # ping-pong: the specialized attention's consumers take turns (named
  # barriers 2 and 3, bar.sync / bar.arrive): the carried p.v group needs
  # 3 or more stages; ragged, causal (two walks, two loops with turns),
  # persistent, and the backward's two kernels
  "turns wgmma fwd B2 512/128 spec st3|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma -D B=2 -D M=512 -D K2=512 -D N=128 -D K1=128 --hardware specialize=1,stages=3,pingpong=1|sm_90a"
  "turns wgmma fwd_causal B2 300/64 spec st4|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma_causal -D B=2 -D M=300 -D K2=300 -D N=64 -D K1=64 --hardware specialize=1,stages=4,pingpong=1|sm_90a"
  "turns wgmma fwd B3 256/64 spec+pers st3|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma -D B=3 -D M=256 -D K2=256 -D N=64 -D K1=64 -D BLOCK_K2=128 --hardware specialize=1,persistent=1,sms=2,stages=3,pingpong=1|sm_90a"
  "turns wgmma dkdv B1 256/64 spec st3|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dkdv_wgmma -D B=1 -D M=256 -D K2=256 -D N=64 -D K1=64 --hardware specialize=1,stages=3,pingpong=1|sm_90a"
  "turns wgmma dq B1 256/128 spec st3|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dq_wgmma -D B=1 -D M=256 -D K2=256 -D N=128 -D K1=128 --hardware specialize=1,stages=3,pingpong=1|sm_90a"
  # overlap: the carried p.v group issued after the next iteration's q.k^T
  # (a commit between them, a partial wait before the softmax); plain and
  # specialized, ragged, causal (two loops), persistent, the backward
  "overlap wgmma fwd B2 333/64 st3|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma -D B=2 -D M=200 -D K2=333 -D N=64 -D K1=64 --hardware stages=3,overlap=1|sm_90a"
  "overlap wgmma fwd B2 512/128 spec st3|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma -D B=2 -D M=512 -D K2=512 -D N=128 -D K1=128 --hardware specialize=1,stages=3,overlap=1|sm_90a"
  "overlap wgmma fwd_causal B2 300/64 spec st4|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma_causal -D B=2 -D M=300 -D K2=300 -D N=64 -D K1=64 --hardware specialize=1,stages=4,overlap=1|sm_90a"
  "overlap wgmma fwd B3 256/64 spec+pers st3|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma -D B=3 -D M=256 -D K2=256 -D N=64 -D K1=64 -D BLOCK_K2=128 --hardware specialize=1,persistent=1,sms=2,stages=3,overlap=1|sm_90a"
  "overlap wgmma dkdv B1 256/64 spec st3|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dkdv_wgmma -D B=1 -D M=256 -D K2=256 -D N=64 -D K1=64 --hardware specialize=1,stages=3,overlap=1|sm_90a"
  "overlap wgmma dq B1 256/128 spec st3|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dq_wgmma -D B=1 -D M=256 -D K2=256 -D N=128 -D K1=128 --hardware specialize=1,stages=3,overlap=1|sm_90a"
  # turns in the rotated loop: q.k^T(j) and p.v(j-1) one consumer's section
  "fa3 wgmma fwd B2 512/128 spec st3|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma -D B=2 -D M=512 -D K2=512 -D N=128 -D K1=128 -D BLOCK_K2=128 --hardware specialize=1,stages=3,overlap=1,pingpong=1|sm_90a"
  "fa3 wgmma fwd_causal B2 300/64 spec st4|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma_causal -D B=2 -D M=300 -D K2=300 -D N=64 -D K1=64 --hardware specialize=1,stages=4,overlap=1,pingpong=1|sm_90a"
  "fa3 wgmma fwd_causal B3 333/128 spec+pers st3|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma_causal -D B=3 -D M=333 -D K2=333 -D N=128 -D K1=128 -D BLOCK_K2=128 --hardware specialize=1,persistent=1,sms=2,stages=3,overlap=1,pingpong=1|sm_90a"
  "fa3 wgmma dkdv B1 256/64 spec st3|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dkdv_wgmma -D B=1 -D M=256 -D K2=256 -D N=64 -D K1=64 --hardware specialize=1,stages=3,overlap=1,pingpong=1|sm_90a"
  # the one-pass backward: dq's parts added by write(..., reduce = add)
  # (red.global.add.f32) from both warpgroups of every key tile, against the
  # simulator's adds (another order: within the tolerance)
  "bwd1 prep B2 200/128|examples/attention_bwd_wgmma.wave --kernel attention_bwd_prep -D B=2 -D M=200 -D N=128"
  "bwd1 wgmma fused B2 256/128|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma -D B=2 -D M=256 -D K2=256 -D N=128 -D K1=128|sm_90a"
  "bwd1 wgmma fused_causal B1 384/64 st3|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma_causal -D B=1 -D M=384 -D K2=384 -D N=64 -D K1=64 --hardware stages=3|sm_90a"
  "bwd1 wgmma fused B1 200/64 ragged spec=0|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma -D B=1 -D M=200 -D K2=200 -D N=64 -D K1=64 --hardware specialize=0|sm_90a"
  "bwd1 wgmma fused B2 256/128 spec=1|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma -D B=2 -D M=256 -D K2=256 -D N=128 -D K1=128 --hardware specialize=1|sm_90a"
  "bwd1 fused (mma.sync) B2 128/64|examples/attention_bwd.wave --kernel attention_bwd_fused -D B=2 -D M=128 -D K2=128 -D N=64 -D K1=64"
  "bwd1 fused (mma.sync) B1 100/32 ragged 4 waves|examples/attention_bwd.wave --kernel attention_bwd_fused -D B=1 -D M=100 -D K2=100 -D N=32 -D K1=32 -D BLOCK_M=64 -D BLOCK_K2=64 -D WAVES=4"
  "split-k gemm 200x136x320|tests/kernels/reduce_add.wave --kernel gemm_split_k -D M=200 -D N=136 -D K=320"
  "split-k gemm waves 64x96x256|tests/kernels/reduce_add.wave --kernel gemm_split_k_waves -D M=64 -D N=96 -D K=256"
  "reduce-add row_sum 96x200|tests/kernels/reduce_add.wave --kernel row_sum -D M=96 -D N=200"
  "bwd1 wgmma fused B1 200/64 ragged adds=2|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma -D B=1 -D M=200 -D K2=200 -D N=64 -D K1=64 --hardware adds=2|sm_90a"
  "bwd1 wgmma fused_causal B2 256/128 adds=2|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma_causal -D B=2 -D M=256 -D K2=256 -D N=128 -D K1=128 --hardware adds=2|sm_90a"
  "bwd1 wgmma fused B1 256/64 exchange=1 (descriptor inside a panel)|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma -D B=1 -D M=256 -D K2=256 -D N=64 -D K1=64 --hardware exchange=1|sm_90a"
  "bwd1 wgmma fused B2 256/64 wide 128x128 (cloned dq exchanged)|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma -D B=2 -D M=256 -D K2=256 -D N=64 -D K1=64 -D BLOCK_M=128|sm_90a"
  "bwd1 wgmma fused_causal B1 200/64 ragged wide 128x128|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma_causal -D B=1 -D M=200 -D K2=200 -D N=64 -D K1=64 -D BLOCK_M=128|sm_90a"
  "bwd1 wgmma fused B2 256/64 ahead1 (next s, dp issued after dk)|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma -D B=2 -D M=256 -D K2=256 -D N=64 -D K1=64 --hardware stages=2,mma_ahead=1,read_ahead=0|sm_90a"
  "bwd1 wgmma fused B1 200/64 ragged ahead2|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma -D B=1 -D M=200 -D K2=200 -D N=64 -D K1=64 --hardware mma_ahead=2|sm_90a"
  "bwd1 wgmma fused_causal B1 384/64 ahead2 (two loops, each peeled)|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma_causal -D B=1 -D M=384 -D K2=384 -D N=64 -D K1=64 --hardware stages=2,mma_ahead=2|sm_90a"
  "bwd1 wgmma fused_causal B2 200/64 ragged ahead1 st3|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma_causal -D B=2 -D M=200 -D K2=200 -D N=64 -D K1=64 --hardware stages=3,mma_ahead=1,read_ahead=0|sm_90a"
  "bwd1 wgmma fused B1 328/64 ragged wide 128x128 spec=1|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma -D B=1 -D M=328 -D K2=328 -D N=64 -D K1=64 -D BLOCK_M=128 --hardware specialize=1|sm_90a"
  "bwd1 wgmma fused_causal B1 200/64 ragged exchange=1|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma_causal -D B=1 -D M=200 -D K2=200 -D N=64 -D K1=64 --hardware exchange=1|sm_90a"
  "bwd1 wgmma fused B2 256/128 sum_parts=0|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma -D B=2 -D M=256 -D K2=256 -D N=128 -D K1=128 --hardware exchange=0,sum_parts=0|sm_90a"
  # D = 128: the warpgroups exchange ds for dq's mma (hardware(exchange),
  # the default there), against leaving parts; ragged keys: guards moved
  "bwd1 wgmma fused B2 256/128 exchange=0|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma -D B=2 -D M=256 -D K2=256 -D N=128 -D K1=128 --hardware exchange=0|sm_90a"
  "bwd1 wgmma fused_causal B1 200/128 ragged|examples/attention_bwd_wgmma.wave --kernel attention_bwd_fused_wgmma_causal -D B=1 -D M=200 -D K2=200 -D N=128 -D K1=128|sm_90a"
  "tensor-reduce split-k wgmma 100x72x200|tests/kernels/reduce_add.wave --kernel gemm_split_k_wgmma -D M=100 -D N=72 -D K=200|sm_90a"
  "tensor-reduce split-k wgmma 100x72x200 exchange=0 adds=1|tests/kernels/reduce_add.wave --kernel gemm_split_k_wgmma -D M=100 -D N=72 -D K=200 --hardware exchange=0,adds=1|sm_90a"
  "tensor-reduce gemm 100x72x200 adds=2|tests/kernels/reduce_add.wave --kernel gemm_add_wgmma -D M=100 -D N=72 -D K=200 --hardware adds=2|sm_90a"
  "bwd1 dq_scale B2 200/128|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dq_scale -D B=2 -D M=200 -D K1=128"
  "fa3 wgmma dq B1 256/128 spec st3|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dq_wgmma -D B=1 -D M=256 -D K2=256 -D N=128 -D K1=128 --hardware specialize=1,stages=3,overlap=1,pingpong=1|sm_90a"
  # tensor stores (TMA) in the epilogue: a buffer of 1 of 4 f32 panels (4
  # rounds a tile), tiles over the edge (the copy engine drops what lies
  # outside), against direct stores (stores=1)
  "store wgmma gemm f32 1000x520x96 ragged|examples/gemm_wgmma.wave -D M=1000 -D N=520 -D K=96|sm_90a"
  "store wgmma gemm f32 384x640x256 spec+pers|examples/gemm_wgmma.wave -D M=384 -D N=640 -D K=256 --hardware persistent=1,sms=3,specialize=1|sm_90a"
  "store wgmma gemm f32 384x640x256 stores=1|examples/gemm_wgmma.wave -D M=384 -D N=640 -D K=256 --hardware stores=1|sm_90a"
  "store wgmma fwd B2 300/128 ragged o|examples/attention_fwd_wgmma.wave --kernel attention_fwd_wgmma -D B=2 -D M=300 -D K2=300 -D N=128 -D K1=128|sm_90a"
  "store wgmma dq B1 200/64 ragged|examples/attention_bwd_wgmma.wave --kernel attention_bwd_dq_wgmma -D B=1 -D M=200 -D K2=200 -D N=64 -D K1=64|sm_90a"
  # rows no tensor map takes (not a multiple of 16 bytes): the buffer copied
  # out by the threads, guarded at the edges
  "store copy-out wgmma gemm f32 200x201x96|examples/gemm_wgmma.wave -D M=200 -D N=201 -D K=96|sm_90a"
)
if [ -e examples/attention_bwd.wave ]; then
  for k in attention_bwd_D attention_bwd_dkdv attention_bwd_dq attention_bwd_dkdv_causal attention_bwd_dq_causal; do
    cases+=("${k#attention_} B1 64/32|examples/attention_bwd.wave --kernel $k -D B=1 -D M=64 -D K2=64 -D N=32 -D K1=32")
  done
  for k in attention_bwd_dkdv_causal attention_bwd_dq; do
    cases+=("ragged ${k#attention_} B1 100/64|examples/attention_bwd.wave --kernel $k -D B=1 -D M=100 -D K2=100 -D N=64 -D K1=64")
  done
  for k in attention_bwd_dkdv attention_bwd_dq; do
    cases+=("${k#attention_} B1 128/64 64x32 4 waves|examples/attention_bwd.wave --kernel $k -D B=1 -D M=128 -D K2=128 -D N=64 -D K1=64 -D BLOCK_M=64 -D BLOCK_K2=64 -D WAVES=4 --hardware stages=2")
  done
fi
# program order over global memory (tests/kernels/order.wave): reads of
# what another wave wrote, a second write in another layout, behind the
# compiler's barrier; a wgmma lhs stored [K, M], permuted or not, with
# rows a copy cannot move (loaded into registers) and rows it can
cases+=("order shift_back 96x160x64|tests/kernels/order.wave --kernel shift_back -D M=96 -D N=160 -D K=64")
cases+=("order write_twice 72x96x40|tests/kernels/order.wave --kernel write_twice -D M=72 -D N=96 -D K=40")
cases+=("order shift_back_wgmma 256x192x128|tests/kernels/order.wave --kernel shift_back_wgmma -D M=256 -D N=192 -D K=128|sm_90a")
cases+=("order gemm_at_wgmma 100x64x64 lhs in registers|tests/kernels/regress.wave --kernel gemm_at_wgmma -D M=100 -D N=64 -D K=64|sm_90a")
cases+=("order gemm_at_permuted_wgmma 128x192x128|tests/kernels/regress.wave --kernel gemm_at_permuted_wgmma -D M=128 -D N=192 -D K=128|sm_90a")
if [ -e bench/gemm.wave ]; then
  cases+=("bench gemm_f16 256x256x64|bench/gemm.wave --kernel gemm_f16 -D M=256 -D N=256 -D K=64")
  cases+=("bench gemm_bf16 256x256x64|bench/gemm.wave --kernel gemm_bf16 -D M=256 -D N=256 -D K=64")
  cases+=("wgmma bench gemm_wgmma_bf16 256x512x192|bench/gemm.wave --kernel gemm_wgmma_bf16 -D M=256 -D N=512 -D K=192|sm_90a")
  cases+=("wgmma bench gemm_wgmma_bf16 512x256x256 256-row tiles tma|bench/gemm.wave --kernel gemm_wgmma_bf16 -D M=512 -D N=256 -D K=256 -D BLOCK_M=256 -D BLOCK_N=128 -D WAVES_M=4 --hardware stages=4|sm_90a")
  cases+=("wgmma bench gemm_wgmma_f16 256x256x128 1 wave|bench/gemm.wave --kernel gemm_wgmma_f16 -D M=256 -D N=256 -D K=128 -D BLOCK_N=128 -D WAVES_M=1|sm_90a")
  cases+=("sched bench gemm_wgmma_bf16 512x768x256 spec+pers|bench/gemm.wave --kernel gemm_wgmma_bf16 -D M=512 -D N=768 -D K=256 --hardware persistent=1,sms=4,specialize=1,stages=4|sm_90a")
  cases+=("sched bench gemm_wgmma_f16 512x512x256 spec 128x128|bench/gemm.wave --kernel gemm_wgmma_f16 -D M=512 -D N=512 -D K=256 -D BLOCK_N=128 --hardware specialize=1|sm_90a")
  # tensor stores: 2 rounds of 2 panels a 128x256 tile (stages=4), ragged
  # tiles, persistent tiles reusing the buffer, and the same without them
  cases+=("store bench gemm_wgmma_bf16 256x512x640 spec st4|bench/gemm.wave --kernel gemm_wgmma_bf16 -D M=256 -D N=512 -D K=640 --hardware specialize=1,stages=4|sm_90a")
  cases+=("store bench gemm_wgmma_bf16 256x512x640 stores=1|bench/gemm.wave --kernel gemm_wgmma_bf16 -D M=256 -D N=512 -D K=640 --hardware specialize=1,stages=4,stores=1|sm_90a")
  cases+=("store bench gemm_wgmma_bf16 200x72x96 ragged pers|bench/gemm.wave --kernel gemm_wgmma_bf16 -D M=200 -D N=72 -D K=96 --hardware persistent=1,sms=2,specialize=1,stages=4|sm_90a")
  cases+=("store bench gemm_wgmma_f16 300x200x96 two wgmma row blocks a wave|bench/gemm.wave --kernel gemm_wgmma_f16 -D M=300 -D N=200 -D K=96 -D BLOCK_M=256 -D BLOCK_N=128 -D WAVES_M=2 --hardware stages=3|sm_90a")
  cases+=("store bench gemm_wgmma_bf16 512x512x128 two wgmma row blocks spec+pers|bench/gemm.wave --kernel gemm_wgmma_bf16 -D M=512 -D N=512 -D K=128 -D BLOCK_M=128 -D BLOCK_N=128 -D WAVES_M=1 --hardware specialize=1,persistent=1,sms=3,stages=4|sm_90a")
  cases+=("store bench gemm_wgmma_f16 1000x1016x128 ragged pers|bench/gemm.wave --kernel gemm_wgmma_f16 -D M=1000 -D N=1016 -D K=128 --hardware persistent=1,sms=5,stages=3|sm_90a")
  cases+=("store copy-out bench gemm_wgmma_bf16 200x201x96 spec st4|bench/gemm.wave --kernel gemm_wgmma_bf16 -D M=200 -D N=201 -D K=96 --hardware specialize=1,stages=4|sm_90a")
  cases+=("store copy-out bench gemm_wgmma_bf16 129x250x40 pers|bench/gemm.wave --kernel gemm_wgmma_bf16 -D M=129 -D N=250 -D K=40 --hardware persistent=1,sms=2,stages=4|sm_90a")
  cases+=("store copy-out bench gemm_wgmma_f16 384x630x256 128x128 pers|bench/gemm.wave --kernel gemm_wgmma_f16 -D M=384 -D N=630 -D K=256 -D BLOCK_N=128 --hardware persistent=1,sms=3|sm_90a")
  cases+=("store bench gemm_wgmma_f16 384x640x256 128x128 spec+pers|bench/gemm.wave --kernel gemm_wgmma_f16 -D M=384 -D N=640 -D K=256 -D BLOCK_N=128 --hardware persistent=1,sms=3,specialize=1|sm_90a")
fi
if [ -n "$only" ]; then
  sel=()
  for c in "${cases[@]}"; do [[ "${c%%|*}" == *"$only"* ]] && sel+=("$c"); done
  cases=("${sel[@]}")
fi

fail=0
rows=()
row() { rows+=("$(printf '%-30s %9s %11s %-8s %-9s %-9s %-9s' "$@")"); }

# ops
if [ -z "$only" ]; then
./build/release/gpu_ops >"$LOG/ops.log" 2>&1; rc=$?
ops_summary=$(tail -1 "$LOG/ops.log")
case $rc in 0) v=ok ;; 2) v=NO-GPU ;; *) v=MISMATCH ;; esac
[ $rc -ne 0 ] && fail=1
echo "ops: $ops_summary"
grep -E '^(FAIL|ok) ' "$LOG/ops.log"
mc=-; rcz=-
if [ $quick -eq 0 ]; then
  san --tool memcheck --error-exitcode 99 ./build/release/gpu_ops >"$LOG/ops.memcheck.log" 2>&1
  r=$?; [ $r -eq 0 ] || [ $r -eq 1 ] && mc=ok || { mc=FAIL; fail=1; }
  san --tool racecheck --error-exitcode 99 ./build/release/gpu_ops >"$LOG/ops.racecheck.log" 2>&1
  r=$?; [ $r -eq 0 ] || [ $r -eq 1 ] && rcz=ok || { rcz=FAIL; fail=1; }
fi
row "ops (every TIR op)" - - "$v" "$mc" "$rcz"
fi

# pass 1: every case against the simulator (quick); pass 2: the sanitizers
declare -a MS WORST V MC RC SC
i=0
for c in "${cases[@]}"; do
  i=$((i + 1))
  name=${c%%|*}; rest=${c#*|}; args=${rest%%|*}
  tgt=sm_90; [ "$rest" != "$args" ] && tgt=${rest#*|}
  tol=""; [ "$tgt" != "${tgt%%|*}" ] && { tol="--tolerance ${tgt#*|}"; tgt=${tgt%%|*}; }
  log="$LOG/case$i.log"
  echo "== $name: wavec run $args --target $tgt --compare sim $tol" >"$log"
  # shellcheck disable=SC2086
  $W run $args --target $tgt --compare sim $tol >>"$log" 2>&1; rc=$?
  MS[i]=$(sed -n 's/^gpu [^:]*: \([0-9.]*\) ms.*/\1/p' "$log" | head -1)
  WORST[i]=$(sed -n 's/.*rel l2 \([0-9.e+-]*\).*/\1/p' "$log" | sort -g | tail -1)
  if [ $rc -eq 0 ]; then V[i]=ok
  else
    fail=1; grep -v '^compare.*: ok$' "$log" | tail -8
    if grep -q '^compare' "$log"; then V[i]=MISMATCH; else V[i]=ERROR; fi
  fi
  grep '^compare' "$log"
  MC[i]=-; RC[i]=-; SC[i]=-
  echo "case $i $name: ${V[i]}, ${MS[i]:--} ms, worst rel l2 ${WORST[i]:--}"
done
if [ $quick -eq 0 ]; then
  i=0
  for c in "${cases[@]}"; do
    i=$((i + 1))
    rest=${c#*|}; args=${rest%%|*}
    tgt=sm_90; [ "$rest" != "$args" ] && tgt=${rest#*|}
    tgt=${tgt%%|*}
    log="$LOG/case$i.log"
    # shellcheck disable=SC2086
    san --tool memcheck --error-exitcode 99 $W run $args --target $tgt >"$log.memcheck" 2>&1 \
      && MC[i]=ok || { MC[i]=FAIL; fail=1; tail -20 "$log.memcheck"; }
    # shellcheck disable=SC2086
    san --tool racecheck --error-exitcode 99 $W run $args --target $tgt >"$log.racecheck" 2>&1 \
      && RC[i]=ok || { RC[i]=FAIL; fail=1; tail -20 "$log.racecheck"; }
    # shellcheck disable=SC2086
    san --tool synccheck --error-exitcode 99 $W run $args --target $tgt >"$log.synccheck" 2>&1 \
      && SC[i]=ok || { SC[i]=FAIL; fail=1; tail -20 "$log.synccheck"; }
    echo "case $i sanitizers: memcheck ${MC[i]}, racecheck ${RC[i]}, synccheck ${SC[i]}"
  done
fi
i=0
for c in "${cases[@]}"; do
  i=$((i + 1))
  row "${c%%|*}" "${MS[i]:--}" "${WORST[i]:--}" "${V[i]}" "${MC[i]}" "${RC[i]}" "${SC[i]}"
done

# ragged sizes against float64 references, large ones included
if { [ -z "$only" ] || [[ ragged == *"$only"* ]]; } && [[ " ${GPU_SKIP:-} " != *" ragged "* ]]; then
  ./build/release/gpu_ragged >"$LOG/ragged.log" 2>&1; rc=$?
  case $rc in 0) v=ok ;; 2) v=NO-GPU ;; *) v=MISMATCH ;; esac
  [ $rc -ne 0 ] && fail=1
  grep -E '^(FAIL|SKIP)' "$LOG/ragged.log"; tail -1 "$LOG/ragged.log"
  mc=-
  if [ $quick -eq 0 ]; then
    san --tool memcheck --error-exitcode 99 ./build/release/gpu_ragged --max 100 >"$LOG/ragged.memcheck.log" 2>&1
    r=$?; [ $r -eq 0 ] && mc=ok || { mc=FAIL; fail=1; tail -20 "$LOG/ragged.memcheck.log"; }
  fi
  row "ragged vs float64 (ragged.c)" - - "$v" "$mc" - -
fi

# fp8 and int8 GEMMs against float64 and int64 references, large included
if { [ -z "$only" ] || [[ fp8 == *"$only"* ]]; } && [[ " ${GPU_SKIP:-} " != *" fp8 "* ]]; then
  ./build/release/gpu_fp8mma >"$LOG/fp8mma.log" 2>&1; rc=$?
  case $rc in 0) v=ok ;; 2) v=NO-GPU ;; *) v=MISMATCH ;; esac
  [ $rc -ne 0 ] && fail=1
  grep -E '^(FAIL|SKIP)' "$LOG/fp8mma.log"; tail -1 "$LOG/fp8mma.log"
  mc=-
  if [ $quick -eq 0 ]; then
    san --tool memcheck --error-exitcode 99 ./build/release/gpu_fp8mma --max 256 >"$LOG/fp8mma.memcheck.log" 2>&1
    r=$?; [ $r -eq 0 ] && mc=ok || { mc=FAIL; fail=1; tail -20 "$LOG/fp8mma.memcheck.log"; }
  fi
  row "fp8/int8 vs float64 (fp8mma.c)" - - "$v" "$mc" -
fi

# tensors of more than 2^31 elements, checked exactly, and under memcheck
# (a slow tool run of 16 GB of traffic: a longer limit than san's)
if { [ -z "$only" ] || [[ large == *"$only"* ]]; } && [[ " ${GPU_SKIP:-} " != *" large "* ]]; then
  ./build/release/gpu_large >"$LOG/large.log" 2>&1; rc=$?
  case $rc in 0) v=ok ;; 2) v=NO-GPU ;; *) v=MISMATCH ;; esac
  [ $rc -ne 0 ] && fail=1
  grep -E '^(FAIL|SKIP)' "$LOG/large.log"; tail -1 "$LOG/large.log"
  mc=-
  if [ $quick -eq 0 ]; then
    timeout 900 "$SAN" --tool memcheck --error-exitcode 99 ./build/release/gpu_large >"$LOG/large.memcheck.log" 2>&1
    r=$?; [ $r -eq 0 ] && mc=ok || { mc=FAIL; fail=1; tail -20 "$LOG/large.memcheck.log"; }
  fi
  row "2^31+ elements (large.c)" - - "$v" "$mc" - -
fi

# timing only: the f16 GEMM of the benchmarks at 4096^3 (2 M N K flops)
if [ -e bench/gemm.wave ] && [ -z "$only" ]; then
  $W run bench/gemm.wave --kernel gemm_f16 -D M=4096 -D N=4096 -D K=4096 --target sm_90 >"$LOG/big.log" 2>&1
  ms=$(sed -n 's/^gpu [^:]*: \([0-9.]*\) ms.*/\1/p' "$LOG/big.log" | head -1)
  tf=$(awk -v ms="${ms:-0}" 'BEGIN { if (ms > 0) printf "%.1f", 2 * 4096^3 / (ms * 1e-3) / 1e12; else print "-" }')
  echo "timing: gemm_f16 4096^3: ${ms:-failed} ms, $tf TFLOP/s (one launch after one warm-up)"
fi

if [ -n "${OUT:-}" ]; then
  for f in "$LOG"/*; do echo "==== $f"; cat "$f"; done >"$OUT/gpu-logs.txt"
fi
echo
printf '%-30s %9s %11s %-8s %-9s %-9s %-9s\n' "case" "gpu ms" "rel l2 max" "compare" "memcheck" "racecheck" "synccheck"
printf '%s\n' "${rows[@]}"
[ $fail -eq 0 ] && echo "all passed" || echo "FAILURES (logs in $LOG)"
exit $fail
