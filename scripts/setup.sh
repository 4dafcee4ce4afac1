#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# setup.sh BUILDDIR [meson options...]
#   SETUP_SET=demo|test         which Debian packages (default test):
#                               demo  what building the libraries and the
#                                     tools needs (scripts/run.sh)
#                               test  that and what the test suites, CI and
#                                     the tools' extras need (scripts/test.sh,
#                                     .ci/run)
#   SETUP_TARGETS="target ..."  build only these (meson compile targets,
#                               e.g. bpbench); default everything
#   SETUP_EXTRA_PKGS="pkg ..."  more Debian packages to install first
#                               (scripts/setup-compare.sh: the engines
#                               tools/compare drives)
#
# Everything a fresh Debian machine needs to build this project: installs the
# missing Debian packages (when run as root), configures BUILDDIR with Meson
# (or reconfigures it) and builds it, showing the build's progress.
# Idempotent; safe to run again.  No package is pinned to a version that
# one Debian release has and the next lacks.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-build}; shift || true
set_name=${SETUP_SET:-test}

# Debian package names only.
demo_pkgs=(gcc meson ninja-build pkg-config
           libjemalloc-dev     # bufpool's page memory (else the system allocator)
           liburing-dev        # bufpool's io_uring engine (else the thread pool)
           systemtap-sdt-dev)  # <sys/sdt.h>: the USDT probes (util/probe.h)
test_pkgs=(g++                 # the C++ tests and consumer
           check               # the unit suites
           spin                # tests/model
           valgrind            # .ci/run: DRD
           gnuplot-nox         # bpbench tiotest --plot and its test
           clang               # .ci/run: the libFuzzer build (tests/fuzz)
           cmake               # tests/consumer/run.sh's CMake consumer
           groff-base          # the docs suite: groff reads the man pages (docs/man)
           man-db)             # tests/consumer/run.sh: man opens an installed page
case $set_name in
  demo) pkgs=("${demo_pkgs[@]}") ;;
  test) pkgs=("${demo_pkgs[@]}" "${test_pkgs[@]}") ;;
  *) echo "setup: SETUP_SET is demo or test, not '$set_name'" >&2; exit 2 ;;
esac
read -r -a extra_pkgs <<< "${SETUP_EXTRA_PKGS:-}"
pkgs+=("${extra_pkgs[@]}")

updated=false
installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}
# Install those of "$@" that are missing (as root; else say what to run).
install_missing() {
  local missing=() p
  for p in "$@"; do
    installed "$p" || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing Debian packages: ${missing[*]}" >&2
    echo "setup: run as root, or: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if [ $updated = false ]; then
    apt-get update -qq
    updated=true
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
install_missing "${pkgs[@]}"

# clang's runtime libraries (libFuzzer, the sanitizers' runtimes), which
# the libFuzzer build links: Debian 12 and later ship them in
# libclang-rt-N-dev, which clang only recommends (and --no-install-recommends
# leaves out).  N is the installed clang's major version, found now rather
# than written here: a fixed N is a package the next release drops.  A
# release without that package (Debian 11) has them in
# libclang-common-N-dev, which clang depends on.
if [ "$set_name" = test ] && command -v clang >/dev/null; then
  clang_major=$(clang -dumpversion); clang_major=${clang_major%%.*}
  rt=libclang-rt-$clang_major-dev
  if ! installed "$rt"; then
    if [ $updated = false ] && [ "$(id -u)" -eq 0 ]; then
      apt-get update -qq
      updated=true
    fi
    if apt-cache show "$rt" >/dev/null 2>&1; then
      install_missing "$rt"
    fi
  fi
fi

cd "$here"
# Quiet when it works; meson prints its errors on stdout, so on a failure
# show what it said.
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
# The build shows its progress (ninja's [n/N] lines; one status line on a
# terminal): a fresh build takes minutes on a small machine.
read -r -a targets <<< "${SETUP_TARGETS:-}"
echo "setup: building $builddir${targets[*]:+ (${targets[*]})}"
meson compile -C "$builddir" "${targets[@]}"
echo "setup: built $builddir"
