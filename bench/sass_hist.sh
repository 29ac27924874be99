#!/usr/bin/env bash
# Instruction histogram of the hottest loop of a wavec kernel's SASS (the
# device machine has cuobjdump). Usage: bench/sass_hist.sh FILE.wave KERNEL [wavec args...]
# ARCH=sm_90a for the warpgroup kernels (default sm_90).
set -eu
W=build/release/wavec
ARCH=${ARCH:-sm_90}
f=$1; k=$2; shift 2
d=$(mktemp -d)
$W compile "$f" --kernel "$k" "$@" --emit=ptx --target=$ARCH -o "$d/k.ptx"
ptxas -arch=$ARCH -O3 -v "$d/k.ptx" -o "$d/k.cubin" 2>&1 | grep -E "registers|spill" || true
echo "whole kernel: $(grep -c UTMALDG <(cuobjdump -sass "$d/k.cubin") || true) UTMALDG, $(grep -c HGMMA <(cuobjdump -sass "$d/k.cubin") || true) HGMMA, $(grep -c LDGSTS <(cuobjdump -sass "$d/k.cubin") || true) LDGSTS"
cuobjdump -sass "$d/k.cubin" > "$d/k.sass"
# the longest backward branch's body: from its target label to the branch
python3 - "$d/k.sass" <<'PY'
import re, sys, collections
lines = open(sys.argv[1]).read().splitlines()
ins, labels, pending = [], {}, []
for l in lines:
    lm = re.match(r'\s*(\.L_x_\d+):', l)
    if lm:
        pending.append(lm.group(1)); continue
    m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*?);', l)
    if m:
        a = int(m.group(1), 16)
        for p in pending: labels[p] = a
        pending = []
        ins.append((a, m.group(2)))
best = None
for a, t in ins:
    if 'BRA' not in t:
        continue
    m = re.search(r'(\.L_x_\d+)', t)
    tgt = labels.get(m.group(1)) if m else None
    if tgt is None:
        m = re.search(r'0x([0-9a-f]+)', t)
        tgt = int(m.group(1), 16) if m else None
    if tgt is not None and tgt < a and (best is None or a - tgt > best[1] - best[0]):
        best = (tgt, a)
if not best:
    print("no loop"); sys.exit()
body = [t for a, t in ins if best[0] <= a <= best[1]]
c = collections.Counter(re.sub(r'^@!?U?P\d+\s+', '', t).split()[0] for t in body)
print(f"loop: {len(body)} instructions")
for op, n in c.most_common(25):
    print(f"  {n:5d} {op}")
PY
rm -rf "$d"
