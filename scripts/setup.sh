#!/usr/bin/env bash
# Installs mmtune's build dependencies from Debian's packages (idempotent) and builds it.
#
#   scripts/setup.sh [--build-dir DIR] [--sanitize] [--arch aarch64] [--with-peers] [--with-browser]
#                    [--with-fleet] [--no-build]
#
# --sanitize    build with AddressSanitizer + UndefinedBehaviorSanitizer (default dir build-asan)
# --arch aarch64 cross-build for 64-bit ARM (default dir build-aarch64) with Debian's cross compiler
#               and arm64 libraries (multiarch), and install qemu-user to run what it builds
# --with-peers  also install the optional peer libraries used by comparisons (OpenBLAS, oneDNN,
#               libxsmm); without them mmtune builds and runs, minus those comparisons
# --with-browser also install Chromium (and a font), in which the HTML report test renders the
#               page headless; without it that test is skipped
# --with-fleet  also install Slurm, munge and PyYAML, with which the tests run the fleet-tuning
#               jobs of deploy/ on a one-node Slurm cluster and as the Kubernetes manifests say;
#               without them those tests are skipped
# --no-build    install packages only
#
# Works as root or through sudo; runs `apt-get update` only when a package is missing.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=""
sanitize=OFF
arch=""
with_peers=0
with_browser=0
with_fleet=0
build=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --sanitize) sanitize=ON; shift ;;
    --arch)
      arch="${2:-}"
      if [[ $arch != aarch64 ]]; then
        echo "setup.sh: error: unknown --arch '$arch' (expected aarch64)" >&2
        exit 2
      fi
      shift 2 ;;
    --with-peers) with_peers=1; shift ;;
    --with-browser) with_browser=1; shift ;;
    --with-fleet) with_fleet=1; shift ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: error: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [[ -z "$build_dir" ]]; then
  build_dir=$([[ $sanitize == ON ]] && echo build-asan || echo build)
  [[ -n $arch ]] && build_dir=build-$arch
fi

packages=(
  build-essential cmake ninja-build pkg-config git
  libhwloc-dev nlohmann-json3-dev libcli11-dev libsqlite3-dev
  libbenchmark-dev libgtest-dev libgmock-dev
  libblas3 libblas-test
  python3 python3-numpy python3-pytest help2man
  libjs-chart.js
)
if [[ $arch == aarch64 ]]; then
  # The arm64 halves of the libraries mmtune links (header-only ones serve every architecture),
  # the cross compiler, and qemu-user with binfmt_misc to run arm64 programs here.
  packages+=(g++-aarch64-linux-gnu qemu-user-static binfmt-support
             libhwloc-dev:arm64 libsqlite3-dev:arm64 libbenchmark-dev:arm64 libgtest-dev:arm64
             libgmock-dev:arm64 libblas3:arm64 libblas-test:arm64)
fi
if [[ $with_peers == 1 ]]; then
  packages+=(libopenblas-dev libdnnl-dev)
  # Debian builds libxsmm for x86-64 alone.
  [[ $(dpkg --print-architecture) == amd64 ]] && packages+=(libxsmm-dev)
fi
if [[ $with_browser == 1 ]]; then
  packages+=(chromium fonts-dejavu-core)
fi
if [[ $with_fleet == 1 ]]; then
  packages+=(slurm-wlm munge python3-yaml)
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [[ ${#missing[@]} -gt 0 ]]; then
  if [[ $(id -u) -eq 0 ]]; then
    sudo=()
  elif command -v sudo >/dev/null; then
    sudo=(sudo)
  else
    echo "setup.sh: error: missing packages (${missing[*]}) and neither root nor sudo" >&2
    exit 1
  fi
  echo "setup.sh: installing ${missing[*]}"
  if [[ $arch == aarch64 ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    "${sudo[@]}" dpkg --add-architecture arm64
  fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

if [[ $build == 1 ]]; then
  cross=()
  # The benchmark suites are not built for another architecture: timings under an emulator mean
  # nothing.
  bench=$([[ $sanitize == ON || -n $arch ]] && echo OFF || echo ON)
  [[ -n $arch ]] && cross=(-DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/$arch-linux-gnu.cmake)
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMMTUNE_WERROR=ON \
    -DMMTUNE_SANITIZE="$sanitize" -DMMTUNE_BUILD_BENCH="$bench" "${cross[@]}" >/dev/null
  cmake --build "$build_dir" --parallel "$(nproc)"
fi
