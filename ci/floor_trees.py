#!/usr/bin/env python3
"""ci/floor_trees.py: kernel trees with parts of a pass left out, to read
where a bench line's time goes without stamps.

    ci/floor_trees.py DIR [NAME...]        make DIR/NAME for each (default: all)
    ci/floor_trees.py --list               the names and what each leaves out
    ci/floor_trees.py --audit BITGATE DIR  also compile each tree's kernel files

Each tree is today's device/kernels and oracle/numerics with a few source
lines replaced, so its bytes are wrong: time it with `--no-check`, beside
the plain build in the same device call (docs/SPEED.md, thirty-eighth
round, has the first readings):

    BITGATE_KERNEL_TREE=DIR/attention-floor bitgate bench --variant fast \\
        --runs 30 --no-check --filter 'csa4 pos 65536, B=1'

The difference between two trees' lines is what the left-out part costs
the line, its overlap with the rest included.  Every replaced text must
occur exactly once in its file; when a kernel edit moves one, this script
says which, rather than a device call finding a stale tree.
"""
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (file under device/kernels, text, replacement): one edit each.
INDEX_POOL = ("csa4_compress_steps.h", "const float v = csa4_pool<CANDS>(cand);",
              "const float v = cand[0].score + cand[CANDS - 1].score;")
INDEX_EXPS = ("csa4_compress.h", "w[i] = nx_expf(cand[i].score - m);", "w[i] = cand[i].score - m;")
INDEX_CHAIN = ("csa4_compress.h",
               "inv_rms = nx_csa_inv_rms(csa4_square_sum<CSA4_INDEX_DIM_K>(pool + CSA4_INDEX_DIM_K), "
               "CSA4_INDEX_DIM_K);",
               "inv_rms = pool[CSA4_INDEX_DIM_K + lane];")
INDEX_TRANSFORM = ("csa4_compress.h", "  csa4_index_transform(x, angle, dst);\n}",
                   "  dst[lane] = (nx_u8)(x[0] + x[1] + x[2] + x[3]);\n}")
INDEX_ANGLES = ("csa4_compress_steps.h", "const float2 a = csa_rope_angle(t.freq, pos - 3);",
                "const float2 a = make_float2(t.freq, (float)pos);")
INDEX_EMPTY = ("csa4_compress_steps.h",
               "      csa4_decode<DIM, CANDS, Finish>(p, st, total_ptr, sm, t, x, ape);\n      return;",
               "      return;")
INDEX_LOADS = ("csa4_compress_steps.h", "    phase = (int)(c.start & 3);\n",
               "    if (t.pooler) row[t.tid] = cand[0].score + cand[CANDS - 1].score + tok.gate + upper[0].score + ape[0];\n"
               "    return;\n    phase = (int)(c.start & 3);\n")

WAIT_ONLY = "(csa_chain_wait(), (void)at)"


def pass_waits(file, call):
    """The attention pass whose body is `call` only waits for the pass before."""
    return (file, call + ")", WAIT_ONLY + ")")


CSA4_SCORES = pass_waits("csa4.cu", "csa_attn_scores_resident(at, &cur, p.batch * p.seq, p.heads, CSA4_WINDOW_K + p.topk)")
CSA4_SOFTMAX = pass_waits("csa4.cu", "csa_attn_softmax(at, p.batch * p.seq * p.heads)")
CSA4_VALUES = pass_waits("csa4.cu", "csa_attn_values_narrow(at, p.batch * p.seq, p.heads)")
CSA128_SCORES = pass_waits("csa128.cu",
                           "csa_attn_scores_resident(at, &cur, batch * seq, heads, CSA128_WINDOW_K + present_capacity)")
CSA128_SOFTMAX = pass_waits("csa128.cu", "csa_attn_softmax(at, batch * seq * heads)")
CSA128_VALUES = pass_waits("csa128.cu", "csa_attn_values_narrow(at, batch * seq, heads)")

TREES = {
    "index-empty": ("the index compressor's decode step returns at once: the line's launch floor", [INDEX_EMPTY]),
    "index-loads": ("the decode step loads its inputs and the cursor, stores one word and returns", [INDEX_LOADS]),
    "index-no-compute": ("no pool, RMS chain or transform (the angles, barriers and stores stay)",
                         [INDEX_POOL, INDEX_CHAIN, INDEX_TRANSFORM]),
    "index-no-compute-no-angles": ("index-no-compute, and the angle warp's sincos left out",
                                   [INDEX_POOL, INDEX_CHAIN, INDEX_TRANSFORM, INDEX_ANGLES]),
    "index-no-pool": ("the pool (max, exps, ordered sums) left out, in both compressors", [INDEX_POOL]),
    "index-no-exps": ("the pool's exps left out, in both compressors", [INDEX_EXPS]),
    "index-no-chain": ("the RMS chain left out", [INDEX_CHAIN]),
    "index-no-transform": ("the RoPE, Hadamard and FP4 transform left out", [INDEX_TRANSFORM]),
    "index-no-finish": ("neither the RMS chain nor the transform", [INDEX_CHAIN, INDEX_TRANSFORM]),
    "index-no-angles": ("only the angle warp's sincos left out", [INDEX_ANGLES]),
    "attention-floor": ("the B = 1 scores, softmax and values passes only wait and exit (both ratios)",
                        [CSA4_SCORES, CSA4_SOFTMAX, CSA4_VALUES, CSA128_SCORES, CSA128_SOFTMAX, CSA128_VALUES]),
    "attention-scores-only": ("the B = 1 softmax and values passes only wait and exit (both ratios)",
                              [CSA4_SOFTMAX, CSA4_VALUES, CSA128_SOFTMAX, CSA128_VALUES]),
    "attention-no-values": ("the B = 1 values pass only waits and exits (both ratios)", [CSA4_VALUES, CSA128_VALUES]),
}


def fail(message):
    print("floor_trees: " + message, file=sys.stderr)
    sys.exit(2)


def make(dir_, name):
    what, edits = TREES[name]
    tree = os.path.join(dir_, name)
    if os.path.exists(tree):
        shutil.rmtree(tree)
    for sub in ("device/kernels", "oracle/numerics"):
        shutil.copytree(os.path.join(ROOT, sub), os.path.join(tree, sub))
    for file, text, replacement in edits:
        path = os.path.join(tree, "device", "kernels", file)
        with open(path) as f:
            source = f.read()
        found = source.count(text)
        if found != 1:
            fail("%s: %s holds the text to replace %d times, not once: %r" % (name, file, found, text[:80]))
        with open(path, "w") as f:
            f.write(source.replace(text, replacement))
    return tree


def audit(bitgate, tree, edits):
    """Compiles the kernel files the tree's edits reach: csa4.cu, and csa128.cu where a shared file changed."""
    env = dict(os.environ, BITGATE_KERNEL_TREE=os.path.abspath(tree))
    files = {file for file, _, _ in edits}
    shared = any(f.startswith("csa128") or f.startswith("csa_") for f in files)
    for kernel in ("csa4.cu", "csa128.cu") if shared else ("csa4.cu",):
        run = subprocess.run([bitgate, "audit", "--kernel", kernel], env=env, capture_output=True, text=True)
        if run.returncode != 0 or "ok " + kernel not in run.stdout:
            fail("%s: %s does not compile:\n%s%s" % (os.path.basename(tree), kernel, run.stdout, run.stderr))


def main(argv):
    if argv[:1] in (["-h"], ["--help"]) or not argv:
        print(__doc__.strip())
        return 0 if argv else 2
    if argv == ["--list"]:
        for name, (what, _) in TREES.items():
            print("%-28s %s" % (name, what))
        return 0
    bitgate = None
    if argv[0] == "--audit":
        if len(argv) < 3:
            fail("--audit needs BITGATE and DIR")
        bitgate, argv = argv[1], argv[2:]
        if not os.access(bitgate, os.X_OK):
            fail("BITGATE '%s' is not an executable" % bitgate)
    dir_, names = argv[0], argv[1:] or list(TREES)
    for name in names:
        if name not in TREES:
            fail("no tree '%s' (ci/floor_trees.py --list names them)" % name)
    for name in names:
        tree = make(dir_, name)
        if bitgate:
            audit(bitgate, tree, TREES[name][1])
        print("%s: %s" % (tree, TREES[name][0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
