#!/usr/bin/env bash
# Lets this machine run programs of another architecture (aarch64) as if they were its own:
# binfmt_misc hands them to qemu-user, so that tests which start mmtune as a child process run
# it too. Needs root (it mounts binfmt_misc where the system has not).
#
#   scripts/binfmt_qemu.sh aarch64
set -euo pipefail

arch="${1:?usage: binfmt_qemu.sh aarch64}"
binfmt=/proc/sys/fs/binfmt_misc
if [[ ! -e $binfmt/register ]]; then
  mount -t binfmt_misc binfmt_misc "$binfmt" 2>/dev/null || {
    echo "binfmt_qemu.sh: error: cannot mount $binfmt (root needed): arm64 programs cannot run" >&2
    exit 1
  }
fi
if [[ ! -e $binfmt/qemu-$arch ]]; then
  update-binfmts --import "qemu-$arch" >/dev/null 2>&1 || true
  update-binfmts --enable "qemu-$arch" >/dev/null 2>&1 || true
fi
if ! grep -qx enabled "$binfmt/qemu-$arch" 2>/dev/null; then
  echo "binfmt_qemu.sh: error: qemu-$arch is not registered with binfmt_misc" \
       "(is qemu-user-static installed?)" >&2
  exit 1
fi
