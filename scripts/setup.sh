#!/usr/bin/env bash
# setup.sh BUILDDIR [meson options...]
#   SETUP_EXTRA_PKGS="pkg ..."  more Debian packages to install first
#                               (scripts/setup-compare.sh: the engines
#                               tools/compare drives)
#
# Everything a fresh Debian machine needs to build this project: installs the
# missing Debian packages (when run as root), configures BUILDDIR with Meson
# (or reconfigures it) and builds it.  Idempotent; safe to run again.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-build}; shift || true

# Build and test dependencies, Debian package names only.
pkgs=(gcc g++ meson ninja-build pkg-config check libjemalloc-dev   # build (g++: C++ tests, consumer)
      liburing-dev                                                 # build: bufpool's io_uring engine
      systemtap-sdt-dev                                            # build: <sys/sdt.h>, the USDT probes
      spin valgrind gnuplot-nox clang libclang-rt-14-dev)          # tests and tools
read -r -a extra_pkgs <<< "${SETUP_EXTRA_PKGS:-}"
pkgs+=("${extra_pkgs[@]}")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing Debian packages: ${missing[*]}" >&2
    echo "setup: run as root, or: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

cd "$here"
# Quiet when it works; meson and ninja print their errors on stdout, so on
# a failure show what they said.
quiet() {
  local out
  if ! out=$("$@" 2>&1); then
    printf '%s\n' "$out" | tail -40 >&2
    echo "setup: failed: $*" >&2
    exit 1
  fi
}
if [ -f "$builddir/build.ninja" ]; then
  quiet meson setup --reconfigure "$builddir" "$@"
else
  quiet meson setup "$builddir" "$@"
fi
quiet ninja -C "$builddir"
echo "setup: built $builddir"
