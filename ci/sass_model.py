#!/usr/bin/env python3
"""ci/sass_model.py: cycles a loop iteration by an in-order issue model of its SASS.

    ci/sass_model.py FILE.sass FIRST LAST [LOAD_LATENCY]

FILE.sass is ci/sass.sh's output; FIRST and LAST are the hex addresses of
the loop's first instruction (its back branch's target) and of that back
branch.  The model issues one instruction a cycle, in order, each one held
until its source registers are ready: loads (LD*) are ready LOAD_LATENCY
cycles after issue (default 30, a shared-memory load under load), every
other result 4 cycles after.  It runs the body three times and prints the
last iteration's cycles beside the instruction count: their difference is
what a lone warp waits on its loads and chains.  A model, not a
measurement: it knows no dual issue, no other warps and no bank conflicts,
so use it to compare two forms of one loop (docs/SPEED.md, thirtieth and
thirty-first rounds), and `bitgate bench --loops` to time one.
"""
import re
import sys


def parse(path, first, last):
    body, inside = [], False
    try:
        lines = open(path).readlines()
    except OSError as e:
        sys.exit(f"sass_model: cannot read {path}: {e.strerror}")
    for line in lines:
        m = re.search(r'/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;', line)
        if not m:
            continue
        addr = int(m.group(1), 16)
        inside = inside or addr == first
        if inside:
            body.append(m.group(2))
        if addr == last:
            return body
    sys.exit(f"sass_model: no loop from {first:#x} to {last:#x} in {path}")


def operands(text):
    """(opcode, registers written, registers read) of one instruction."""
    if text.startswith('@'):
        text = text.split(None, 1)[1]
    op = text.split()[0]
    regs = [int(r) for r in re.findall(r'\bR(\d+)\b', text[len(op):])]
    if not regs or op.startswith(('BRA', 'NOP', 'ISETP', 'ST', 'BAR')):
        return op, [], regs
    width = 4 if '.128' in op else 2 if '.64' in op else 1
    return op, [regs[0] + i for i in range(width)], regs[1:]


def number(text, base, what):
    try:
        return int(text, base)
    except ValueError:
        sys.exit(f"sass_model: {what} is '{text}', not a number")


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    path = sys.argv[1]
    first = number(sys.argv[2], 16, "FIRST (a hex address)")
    last = number(sys.argv[3], 16, "LAST (a hex address)")
    load_latency = number(sys.argv[4], 10, "LOAD_LATENCY (cycles)") if len(sys.argv) == 5 else 30
    body = [operands(t) for t in parse(path, first, last)]
    ready, cycle, starts = {}, 0, []
    for _ in range(3):
        starts.append(cycle)
        for op, written, read in body:
            cycle = max([cycle] + [ready.get(r, 0) for r in read])
            for r in written:
                ready[r] = cycle + (load_latency if op.startswith('LD') else 4)
            cycle += 1
    print(f"{len(body)} instructions, {cycle - starts[-1]} cycles an iteration (in order, loads {load_latency} cycles)")


if __name__ == '__main__':
    main()
