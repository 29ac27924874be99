# Kernel names that PTX reserves: WARP_SZ (its one predefined identifier
# without '%') and a lone '_' are entries ptxas refuses; the entry gets a
# '_' more and the module assembles. A ptxas that refuses a module wavec
# made is wavec's bug (exit 1, saying so), not a missing tool (exit 4).
. tests/cli/lib.bash
CUDA=${CUDA_HOME:-/usr/local/cuda}
command -v ptxas >/dev/null || [ -x "$CUDA/bin/ptxas" ] || fail "no ptxas (the CUDA toolkit; set CUDA_HOME)"
for name in WARP_SZ _; do
  cat >"$T/k.wave" <<W
kernel $name(x: Memory[N, f32], WARP_SZ: Memory[N, f32]) {
    constraints {
        workgroup(N, 64, 0)
        wave(N, 64)
        hardware(threads_per_wave = 32)
    }
    write(read(x) * 2.0, WARP_SZ)
}
W
  run 0 compile "$T/k.wave" -D N=256 --target sm_90a --emit=ptx -o "$T/k.ptx"
  has "$T/k.ptx" ".entry ${name}_("
  run 0 compile "$T/k.wave" -D N=256 --target sm_90a --emit=cubin -o "$T/k.cubin"
  [ -s "$T/k.cubin" ] || fail "no cubin for a kernel named $name"
done
# a ptxas that refuses everything
mkdir -p "$T/cuda/bin"
printf '#!/bin/sh\necho "ptxas fatal: refused" >&2\nexit 1\n' >"$T/cuda/bin/ptxas"
chmod +x "$T/cuda/bin/ptxas"
rm -f "$T/k.cubin"
CUDA_HOME=$T/cuda run 1 compile "$T/k.wave" -D N=256 --target sm_90a --emit=cubin -o "$T/k.cubin"
has "$T/err" "ptxas refused the PTX wavec made for '_' (sm_90a): a bug in wavec"
[ ! -e "$T/k.cubin" ] || fail "a cubin was written although ptxas refused"
echo ok
