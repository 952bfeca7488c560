#!/usr/bin/env bash
# ci/sass.sh: the SASS (sm_90 machine code) of an embedded kernel file, on a
# host without a GPU, for reading where ptxas put each instruction.
#
#   ci/sass.sh csa4.cu [FUNCTION] [OUTDIR]     -> OUTDIR/csa4.cu.sass (default /tmp/bitgate-sass)
#
# Steps: `bitgate audit --ptx-out` writes the kernel's PTX under the pinned
# NVRTC options (BITGATE_KERNEL_TREE is honoured as everywhere), ptxas turns
# it into an sm_90 cubin and prints each function's registers and spills,
# and cuobjdump disassembles it; FUNCTION keeps only that function's code.
#
# Why the header rewrite: the CUDA 13 toolkit on the development host has
# ptxas but no cuobjdump.  Debian 12's non-free nvidia-cuda-toolkit (CUDA
# 11.8) has one, which knows sm_90 but not CUDA 13's cubin header (OS ABI
# 0x41, ABI version 8, the SM in e_flags bits 8..15).  Rewritten in the older
# form (0x33, 7, SM | 0x500 | SM << 16) the same code sections disassemble;
# on the GPU host's CUDA 13 cuobjdump the listing was the same instruction
# for instruction (docs/SPEED.md, thirtieth round).  A CUDA 13 cuobjdump,
# where there is one, takes the cubin as it is.
#
# Where the cuobjdump comes from: BITGATE_CUOBJDUMP, else cuobjdump on PATH
# or in /usr/local/cuda/bin, else .cache/cuda118/usr/bin/cuobjdump (git-ignored), which
# `ci/sass.sh --fetch` unpacks from the Debian package (about 84 MB; needs
# apt and the non-free component, which it adds).
set -euo pipefail
cd "$(dirname "$0")/.."
fetched=.cache/cuda118/usr/bin/cuobjdump

if [ "${1:-}" = --fetch ]; then
  if [ ! -f /etc/apt/sources.list.d/bitgate-nonfree.sources ]; then
    printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      >/etc/apt/sources.list.d/bitgate-nonfree.sources
  fi
  apt-get update -qq
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download -q nvidia-cuda-toolkit)
  mkdir -p .cache/cuda118/usr/bin
  dpkg --fsys-tarfile "$tmp"/nvidia-cuda-toolkit_*.deb |
    tar -x -C .cache/cuda118 ./usr/bin/cuobjdump ./usr/bin/nvdisasm # the two it needs, not the 2 GB toolkit
  rm -rf "$tmp"
  echo "sass: $fetched"
  exit 0
fi

[ $# -ge 1 ] || { echo "usage: ci/sass.sh KERNEL.cu [FUNCTION] [OUTDIR] | ci/sass.sh --fetch" >&2; exit 2; }
kernel=$1 function=${2:-} out=${3:-/tmp/bitgate-sass}
bitgate=${BITGATE:-build/bitgate}
ptxas=${BITGATE_PTXAS:-/usr/local/cuda/bin/ptxas}
cuobjdump=${BITGATE_CUOBJDUMP:-$(command -v cuobjdump || true)}
[ -n "$cuobjdump" ] || [ ! -x /usr/local/cuda/bin/cuobjdump ] || cuobjdump=/usr/local/cuda/bin/cuobjdump
[ -n "$cuobjdump" ] || [ ! -x "$fetched" ] || cuobjdump=$fetched
[ -n "$cuobjdump" ] || { echo "sass: no cuobjdump; set BITGATE_CUOBJDUMP or run ci/sass.sh --fetch" >&2; exit 3; }
[ -x "$bitgate" ] || { echo "sass: no $bitgate; run ci/bootstrap.sh" >&2; exit 3; }
export PATH="$(dirname "$cuobjdump"):$PATH" # its nvdisasm beside it

mkdir -p "$out"
BITGATE_SOURCE_DIR=${BITGATE_SOURCE_DIR:-$PWD} "$bitgate" audit --kernel "$kernel" --ptx-out "$out" >/dev/null
"$ptxas" -arch=sm_90 -v "$out/$kernel.ptx" -o "$out/$kernel.cubin" 2>&1 |
  awk '/entry function/ {f=$0; sub(/.*function ./,"",f); sub(/. for.*/,"",f)} /Used [0-9]+ registers/ {r=$0; sub(/.*Used /,"",r); sub(/ registers.*/,"",r); print f ": " r " registers" s} /spill/ {s=", " $5 " bytes spilled"}' \
    >"$out/$kernel.registers"

cubin=$out/$kernel.cubin
if ! "$cuobjdump" -sass "$cubin" >/dev/null 2>&1; then # an older cuobjdump: the header in its form
  python3 - "$cubin" "$out/$kernel.old-header.cubin" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
sm = (struct.unpack_from('<I', d, 0x30)[0] >> 8) & 0xff
d[7], d[8] = 0x33, 0x07
struct.pack_into('<I', d, 0x30, sm | 0x500 | sm << 16)
open(sys.argv[2], 'wb').write(d)
PY
  cubin=$out/$kernel.old-header.cubin
fi
"$cuobjdump" -sass "$cubin" | grep -o '/\*[0-9a-f]\{4\}\*/ .*;\|Function : .*' | sed 's/ \+/ /g' >"$out/$kernel.sass"
if [ -n "$function" ]; then
  awk -v f="Function : $function" '$0 == f {p = 1; print; next} /^Function :/ {p = 0} p' "$out/$kernel.sass" \
    >"$out/$kernel.$function.sass"
  [ -s "$out/$kernel.$function.sass" ] || { echo "sass: no function $function in $kernel" >&2; exit 1; }
  echo "sass: $out/$kernel.$function.sass ($(grep -c . "$out/$kernel.$function.sass") lines)"
else
  echo "sass: $out/$kernel.sass"
fi
cat "$out/$kernel.registers"
