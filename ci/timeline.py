#!/usr/bin/env python3
"""ci/timeline.py: the B = 1 attention's timeline from a stamped build's output.

    ci/kernel_tree.sh ci/timeline_stamps.patch .dev/trees/stamps      # here
    BITGATE_KERNEL_TREE=$PWD/.dev/trees/stamps bitgate bench --variant fast \\
        --runs 30 --filter 'csa4 pos 65536, B=1' --no-check > stamps.log  # on the GPU
    ci/timeline.py stamps.log [more.log ...]

The patch (ratio-4 kernels only) stamps %globaltimer in thread 0 of every
block of the four attention passes: when the block starts, when its
griddepcontrol.wait returns and when it ends; the values pass's last block
prints every block's stamps on the module's 20th and 25th run of that pass
("STAMP replay pass block start wait end", ns).  This prints, per log and
replay, each pass's blocks and the min / median / max of the three stamps,
in us from the first pass's first block start (the gather's; at B = 1 the
scores pass's, as no gather is launched there: docs/SPEED.md,
thirty-fourth round).  A block that never waited
shows "-".  The stamps add about 3.5 us to the line (docs/SPEED.md,
thirty-second round), so read the gaps, not the total.
"""
import signal
import statistics
import sys

PASSES = ("gather", "scores", "softmax", "values")


def read(paths):
    runs = {}
    for path in paths:
        try:
            f = open(path, errors="replace")
        except OSError as e:
            raise SystemExit(f"timeline: cannot read {path}: {e.strerror}")
        with f:
            for line in f:
                if not line.startswith("STAMP "):
                    continue
                fields = line.split()
                if len(fields) != 7:
                    raise SystemExit(f"timeline: {path}: malformed line: {line.strip()}")
                replay, pass_, block, *stamps = (int(x) for x in fields[1:])
                if not 0 <= pass_ < len(PASSES):
                    raise SystemExit(f"timeline: {path}: pass {pass_} is not one of 0..{len(PASSES) - 1}: {line.strip()}")
                runs.setdefault((path, replay), []).append((pass_, block, *stamps))
    return runs


def spread(values):
    if not values:
        return f"{'-':>20}"
    values = sorted(values)
    return f"{values[0]:6.2f} {statistics.median(values):6.2f} {values[-1]:6.2f}"


def main(argv):
    if len(argv) < 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    if argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    runs = read(argv[1:])
    if not runs:
        print("timeline: no STAMP lines (was the tree made from ci/timeline_stamps.patch?)", file=sys.stderr)
        return 1
    for (path, replay), rows in sorted(runs.items()):
        first = min(r[0] for r in rows)
        t0 = min(r[2] for r in rows if r[0] == first)
        print(f"{path} replay {replay} (us from the first block start of the {PASSES[first]} pass)")
        print(f"  {'pass':8} {'blocks':>6}  {'start min/med/max':>20}  {'wait min/med/max':>20}  {'end min/med/max':>20}")
        for p, name in enumerate(PASSES):
            sel = [r for r in rows if r[0] == p]
            if not sel:
                continue
            cols = [spread([(r[i] - t0) / 1000 for r in sel if r[i]]) for i in (2, 3, 4)]
            print(f"  {name:8} {len(sel):6}  {cols[0]:>20}  {cols[1]:>20}  {cols[2]:>20}")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output quietly
    sys.exit(main(sys.argv))
