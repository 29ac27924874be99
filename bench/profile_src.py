"""Where each attention-forward kernel's warps wait, instruction by
instruction: ncu's PC sampling (SourceCounters) of one launch at N = 8192,
D = 128, for wavec's plain 128x64 2-stage kernel, its specialized 128x128
3-stage one with and without turns, and SDPA-cuDNN's. For each kernel:
the SASS of the hottest instructions with their stall samples by reason,
and the samples summed by opcode. Runs ncu on itself:
  python3 bench/profile_src.py [OUTDIR]
(OUTDIR gets each kernel's whole source page as CSV.)"""
import csv, io, os, subprocess, sys

CFGS = [("plain-128x64-st2", 128, 64, dict(stages=2)),
        ("spec-128x128-st3", 128, 128, dict(stages=3, specialize=1)),
        ("spec-128x128-st3-turns", 128, 128, dict(stages=3, specialize=1, pingpong=1)),
        ("cudnn", 0, 0, None)]

def roles(body, col, samples):
    """The samples of a warp-specialized kernel split by role: the
    producer's code runs from its setmaxnreg.dec (USETMAXREG ... DEALLOC
    in SASS) to the first EXIT after it, the consumers' from their
    setmaxnreg.inc (USETMAXREG ... TRYALLOC) on; the rest is the common
    entry. [(role, samples, [(opcode, samples), ...] descending)]; empty
    for a kernel without the two."""
    src = [r[col["Source"]] for r in body]
    dec = next((i for i, t in enumerate(src) if "USETMAXREG" in t and "DEALLOC" in t), None)
    inc = next((i for i, t in enumerate(src) if "USETMAXREG" in t and "DEALLOC" not in t), None)
    if dec is None or inc is None:
        return []
    def opcode(t):
        op = [x for x in t.split() if not x.startswith("@")]
        return op[0].split(".")[0] if op else "?"
    end = next((i for i in range(dec, len(src)) if opcode(src[i]) == "EXIT"), len(src))
    def role_at(i):
        return "producer" if dec <= i <= end and (inc < dec or i < inc) else "consumers" if i >= inc else "entry"
    # the out-of-line blocks after the last EXIT (an mbarrier wait's retry
    # loop, ending in a branch back) belong to the role they branch to
    last = max((i for i in range(len(src)) if opcode(src[i]) == "EXIT"), default=len(src))
    at = {}
    for i, r in enumerate(body):
        try:
            at[int(r[col["Address"]], 16)] = i
        except ValueError:
            pass
    owner = {}
    block = []
    for i in range(last + 1, len(src)):
        block.append(i)
        t = src[i].split()
        if t and t[0] == "BRA":
            try:
                to = at.get(int(t[1].rstrip(";"), 16))
            except (ValueError, IndexError):
                to = None
            for j in block:
                owner[j] = role_at(to) if to is not None else "entry"
            block = []
    part = {}
    for i, r in enumerate(body):
        role = owner.get(i, role_at(i))
        op = opcode(src[i])
        tot, ops = part.get(role, (0.0, {}))
        ops[op] = ops.get(op, 0) + samples(r)
        part[role] = (tot + samples(r), ops)
    return [(k, v[0], sorted(v[1].items(), key=lambda x: -x[1])) for k, v in sorted(part.items())]

def summarize(name, text, out):
    rows = list(csv.reader(io.StringIO(text)))
    head = next((i for i, r in enumerate(rows) if "Address" in r and "Source" in r), None)
    if head is None:
        print(f"{name}: no source page\n{text[:2000]}"); return
    h = rows[head]
    body = [r for r in rows[head + 1:] if len(r) == len(h)]
    if out:
        with open(os.path.join(out, f"src-{name}.csv"), "w") as f:
            f.write(text)
    col = {c: i for i, c in enumerate(h)}
    allc = next((c for c in h if c.startswith("Warp Stall Sampling (All")), None)
    reasons = [c for c in h if c.startswith("stall_") or c.startswith("smsp__pcsamp_warps_issue_stalled")]
    def num(r, c):
        try: return float(r[col[c]].replace(",", "") or 0)
        except ValueError: return 0.0
    tot = sum(num(r, allc) for r in body) or 1
    print(f"=== {name}: {len(body)} instructions, {tot:.0f} samples; columns: {[c for c in h if 'Stall' in c or 'stall' in c][:40]}")
    byop = {}
    for r in body:
        op = r[col["Source"]].split()
        op = [t for t in op if not t.startswith("@")]
        op = op[0].split(".")[0] if op else "?"
        byop[op] = byop.get(op, 0) + num(r, allc)
    print("by opcode:", ", ".join(f"{k} {100 * v / tot:.1f}%" for k, v in sorted(byop.items(), key=lambda x: -x[1])[:16]))
    for role, share, ops in roles(body, col, lambda r: num(r, allc)):
        print(f"by role: {role} {100 * share / tot:.1f}% of the samples; by opcode: "
              + ", ".join(f"{k} {100 * v / tot:.1f}%" for k, v in ops[:10]))
    for r in sorted(body, key=lambda r: -num(r, allc))[:30]:
        why = sorted(((num(r, c), c.replace("smsp__pcsamp_warps_issue_stalled_", "")) for c in reasons), reverse=True)[:3]
        print(f"{100 * num(r, allc) / tot:5.1f}% {r[col['Address']]:>6} {r[col['Source']][:60]:60} "
              + " ".join(f"{c}={v:.0f}" for v, c in why if v))

def drive(cfgs, script, out):
    """ncu's source page and warp states of one launch for each of cfgs,
    run by `script` under WV_UNDER_NCU=<index>."""
    if out:
        os.makedirs(out, exist_ok=True)
    only = [n for n in os.environ.get("WV_PROFILE_ONLY", "").split(",") if n]
    for i, (name, *_rest) in enumerate(cfgs):
        if only and name not in only:  # WV_PROFILE_ONLY: these configurations' names
            continue
        rep = f"/tmp/wv-src-{i}"
        r = subprocess.run(["ncu", "--profile-from-start", "off", "--launch-count", "1", "--section", "SourceCounters",
                            "--section", "WarpStateStats", "--import-source", "no", "-f", "-o", rep,
                            sys.executable, script], env=dict(os.environ, WV_UNDER_NCU=str(i)),
                           capture_output=True, text=True)
        if r.returncode:
            print(f"{name}: ncu failed\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"); continue
        p = subprocess.run(["ncu", "-i", rep + ".ncu-rep", "--page", "source", "--csv", "--print-source", "sass"],
                           capture_output=True, text=True)
        summarize(name, p.stdout, out)
        w = subprocess.run(["ncu", "-i", rep + ".ncu-rep", "--page", "details", "--section", "WarpStateStats"],
                           capture_output=True, text=True)
        print("\n".join(l for l in w.stdout.splitlines() if "Stall" in l or "Cycles" in l or "Warp" in l)[:3000])

def run_one():
    """Under ncu: one launch of configuration WV_UNDER_NCU (warmed first)."""
    sys.path.insert(0, os.path.dirname(__file__))
    import torch
    import torch.nn.functional as F
    from bench import wavec_compile, attn_fwd_inputs

    name, bm, bk, hw = CFGS[int(os.environ["WV_UNDER_NCU"])]
    D = N = None
    D, N = 128, 8192
    BH, q, kk, vv, o, lse, _ = attn_fwd_inputs(D, N)
    if hw is not None:
        k, *_ = wavec_compile("examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
                              dict(B=BH, M=N, K2=N, K1=D, N=D, BLOCK_M=bm, BLOCK_K2=bk), hw, target="sm_90a")
        k(q, kk, vv, o, lse); torch.cuda.synchronize()
        torch.cuda.profiler.start(); k(q, kk, vv, o, lse); torch.cuda.synchronize(); torch.cuda.profiler.stop()
    else:
        B = max(1, 16384 // N); H = 2048 // D
        qq, kq, vq = (t.reshape(B, H, N, D) for t in (q, kk, vv))
        from torch.nn.attention import sdpa_kernel, SDPBackend
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            F.scaled_dot_product_attention(qq, kq, vq, scale=0.125); torch.cuda.synchronize()
            torch.cuda.profiler.start(); F.scaled_dot_product_attention(qq, kq, vq, scale=0.125)
            torch.cuda.synchronize(); torch.cuda.profiler.stop()

if __name__ == "__main__":
    if os.environ.get("WV_UNDER_NCU") is None:
        drive(CFGS, __file__, sys.argv[1] if len(sys.argv) > 1 else None)
    else:
        run_one()
