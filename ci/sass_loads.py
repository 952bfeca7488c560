#!/usr/bin/env python3
"""ci/sass_loads.py: how far ahead of its first use each shared-memory load is issued.

    ci/sass_loads.py FILE.sass [FIRST LAST]

FILE.sass is ci/sass.sh's output; FIRST and LAST (hex addresses, as in
ci/sass_model.py) keep a range of it, else the whole function.  For each
LDS / LDS.128 it counts the instructions from the load to the first one
that reads any register it wrote, and prints the loads' count and those
distances in order, then their median.  A distance shorter than the
load's latency in instructions (about 25-30 for shared memory) is a wait
when the warp is alone on its scheduler: the thirty-seventh round of
docs/SPEED.md read the values pass's loop this way (6-14 in a rolled or
low-register form, 22-27 in the kept one).
"""
import os
import re
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ in ci/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_model import operands  # noqa: E402  (one decoding of an instruction's registers for both scripts)

LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;")


def read(path, first=None, last=None):
    out = []
    for line in open(path):
        m = LINE.search(line)
        if m and (first is None or first <= int(m.group(1), 16) <= last):
            out.append(operands(m.group(2)))
    return out


def distances(ins):
    found = []
    for i, (op, written, _) in enumerate(ins):
        if not op.startswith("LDS"):
            continue
        for j in range(i + 1, len(ins)):
            if set(written) & set(ins[j][2]):
                found.append(j - i)
                break
    return found


def address(text, what):
    try:
        return int(text, 16)
    except ValueError:
        raise SystemExit("sass_loads: %s (a hex address) is '%s'" % (what, text))


def main(argv):
    if len(argv) not in (2, 4):
        print("usage: " + __doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    first, last = (address(argv[2], "FIRST"), address(argv[3], "LAST")) if len(argv) == 4 else (None, None)
    try:
        ins = read(argv[1], first, last)
    except OSError as e:
        raise SystemExit("sass_loads: cannot read %s: %s" % (argv[1], e.strerror))
    found = distances(ins)
    print("%d instructions, %d loads used; distance to first use: %s" % (len(ins), len(found), found))
    if found:
        print("median %.1f" % statistics.median(found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
