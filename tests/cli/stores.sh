# Tensor stores (TMA) in the epilogue from the command line: --help lists
# the knob, the remark at the write says which epilogue the compiler chose
# and why, stores=1 turns them off, values out of range are refused, the
# C launcher builds the output's tensor map after the operands', and the
# simulator runs both forms.
. tests/cli/lib.bash
gemm=(bench/gemm.wave --kernel gemm_wgmma_bf16 -D M=256 -D N=512 -D K=128)
run 0 --help
has "$T/out" "stores=1..2"
run 0 compile "${gemm[@]}" --remarks --hardware specialize=1,stages=4
has "$T/err" "gemm.wave:77:5: remark: write of 'c': tensor stores (TMA) from a dedicated 32768-byte shared buffer holding 2 of the tile's 4 column panels"
has "$T/out" "tma.store.bf16 c map 2"
has "$T/out" "fence.proxy.pred"
lacks "$T/out" "stg."
run 0 compile "${gemm[@]}" --remarks --hardware stores=1
has "$T/err" "write of 'c': each thread stores its elements (not tensor stores: hardware(stores = 1))"
lacks "$T/out" "tma.store"
has "$T/out" "stg.v.bf16"
run 0 compile bench/gemm.wave --kernel gemm_wgmma_bf16 -D M=129 -D N=250 -D K=40 --remarks
has "$T/err" "write of 'c': through a dedicated"
has "$T/err" "read back by the threads, consecutive threads storing consecutive elements of a row (its rows are not a multiple of 16 bytes, which a tensor map's stride must be), guarded at the edges"
lacks "$T/out" "tma.store"
has "$T/out" "lds."
for bad in 0 3 x; do
  run 2 compile "${gemm[@]}" --hardware "stores=$bad"
  has "$T/err" "invalid --hardware entry 'stores=$bad'"
done
run 0 compile "${gemm[@]}" --emit=c --target sm_90a -o "$T/k.c"
has "$T/k.c" "CUtensorMap tmap[3];"
has "$T/k.c" "tr = cuTensorMapEncodeTiled(&tmap[2], CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2u, (void *)(uintptr_t)c,"
run 0 compile "${gemm[@]}" --emit=c --target sm_90a --hardware stores=1 -o "$T/k1.c"
has "$T/k1.c" "CUtensorMap tmap[2];"
run 0 run "${gemm[@]}" --hardware specialize=1,persistent=1,sms=2,stages=4
run 0 run "${gemm[@]}" --hardware stores=1
