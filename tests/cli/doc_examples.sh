# Every example of docs/LANGUAGE-additions.md is a kernel the tests run: a
# code block that starts "# FILE, kernel NAME" must appear, line for line
# after its leading comments, in FILE, and FILE's kernel NAME must compile
# (wavec check) with the sizes the block's file defaults to or these.
. tests/cli/lib.bash
doc=docs/LANGUAGE-additions.md
python3 - "$doc" >"$T/blocks" 2>"$T/why" <<'PY' || fail "$(cat "$T/why")"
import re, sys
text = open(sys.argv[1]).read()
blocks = re.findall(r"^```[a-z]*\n(.*?)^```$", text, re.S | re.M)
n = 0
for b in blocks:
    m = re.match(r"# (\S+\.wave), kernel (\w+)", b)
    if not m:
        continue
    path, name = m.groups()
    body = "".join(l + "\n" for l in b.splitlines() if not l.startswith("#")).lstrip("\n")
    try:
        src = open(path).read()
    except OSError:
        sys.exit(f"{sys.argv[1]}: the example of kernel {name} names {path}, which does not exist")
    if body not in src:
        sys.exit(f"{sys.argv[1]}: the example of kernel {name} is not the text of {path}")
    if not re.search(r"^kernel " + name + r"\(", body, re.M):
        sys.exit(f"{sys.argv[1]}: the example headed 'kernel {name}' defines no kernel {name}")
    print(path, name)
    n += 1
if n < 5:
    sys.exit(f"{sys.argv[1]}: {n} examples headed '# FILE, kernel NAME' (at least 5 expected)")
PY
defs=(-D M=70 -D N=70 -D K=64 -D B=1)
while read -r path name; do
  run 0 check "$path" --kernel "$name" "${defs[@]}"
done <"$T/blocks"
