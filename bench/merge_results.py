"""Merges the RESULTS.md of several bench.py runs (one folder per part, as
bench/device_session.sh writes them) into one file: the first run's
header, then each part's table under its own heading.

Usage: python3 bench/merge_results.py OUT.md TITLE PART=DIR ..."""
import sys

def main():
    out, title, parts = sys.argv[1], sys.argv[2], sys.argv[3:]
    text = [f"# wavec benchmarks — {title}\n"]
    for i, spec in enumerate(parts):
        name, d = spec.split("=", 1)
        lines = open(f"{d}/RESULTS.md").read().splitlines()
        table = [l for l in lines if l.startswith("|")]
        prose = [l for l in lines[1:] if l and not l.startswith("|")]
        if i == 0:
            for l in prose:
                text += ["", l]
        else:  # a part's own notes (launch overhead, compile times) only
            for l in prose:
                if l.startswith("Host time"):
                    text += ["", l]
        text += ["", f"## {name}", "", *table]
    open(out, "w").write("\n".join(text) + "\n")

if __name__ == "__main__":
    main()
