#!/usr/bin/env bash
# Instruction histogram of the hottest loop of a wavec kernel's SASS (the
# device machine has cuobjdump). Usage: bench/sass_hist.sh FILE.wave KERNEL [wavec args...]
set -eu
W=build/release/wavec
f=$1; k=$2; shift 2
d=$(mktemp -d)
$W compile "$f" --kernel "$k" "$@" --emit=ptx -o "$d/k.ptx"
ptxas -arch=sm_90 -O3 -v "$d/k.ptx" -o "$d/k.cubin" 2>&1 | grep -E "registers|spill" || true
cuobjdump -sass "$d/k.cubin" > "$d/k.sass"
# the longest backward branch's body: from its target label to the branch
python3 - "$d/k.sass" <<'PY'
import re, sys, collections
lines = open(sys.argv[1]).read().splitlines()
ins = []
for l in lines:
    m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*?);', l)
    if m: ins.append((int(m.group(1), 16), m.group(2)))
best = None
for i, (a, t) in enumerate(ins):
    m = re.search(r'BRA\s+(?:`\(\.L_x_\d+\)|0x([0-9a-f]+))', t)
    tm = re.search(r'\.L_x_(\d+)', t)
for i, (a, t) in enumerate(ins):
    if 'BRA' in t:
        m = re.search(r'0x([0-9a-f]+)', t)
        if m:
            tgt = int(m.group(1), 16)
            if tgt < a and (best is None or a - tgt > best[1] - best[0]):
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
