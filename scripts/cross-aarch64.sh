#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cross-aarch64.sh [BUILDDIR] [meson options...]
#
# Cross-builds the project for aarch64 (scripts/aarch64-linux-gnu.ini) into
# BUILDDIR (default build-aarch64) and runs the unit suites under qemu-user
# (Meson's exe_wrapper).  It proves that the code builds and passes off
# x86 (the CRC-32C and the per-CPU counters on their portable paths, the
# aarch64 spin hint); it does not exercise weak-memory races: qemu-user
# runs the guest's loads and stores with the host's (x86) memory order.
# See docs/reliability.md, "aarch64".
#
# Installs what it needs as Debian packages when run as root, like
# setup.sh: the cross compilers and qemu-user, and through multiarch
# (dpkg --add-architecture arm64) the arm64 builds of the libraries the
# tests link: libc6 and check are required, liburing optional (built with
# -Dio_uring=disabled if it does not install).  Never jemalloc: Debian's
# libjemalloc-dev is not Multi-Arch: same, so its arm64 build would remove
# the amd64 one the native build uses; the cross build is -Djemalloc=disabled
# (the system allocator; nothing there is architecture-specific).  apt-get
# runs with --no-remove: it never takes a package away.  Idempotent.  Exits
# non-zero on any failure.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-build-aarch64}; shift || true
start=$(date +%s)
say() { echo "cross-aarch64: $* ($(( $(date +%s) - start )) s)"; }

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
# Other jobs on the machine may hold dpkg's lock: wait for it, not fail.
apt_get() { apt-get -o DPkg::Lock::Timeout=600 "$@"; }
apt_install() { apt_get install -y -qq --no-install-recommends --no-remove "$@" >/dev/null; }
updated=0
apt_update() {
  if [ "$updated" -eq 0 ]; then apt_get update -qq; updated=1; fi
}
is_root() { [ "$(id -u)" -eq 0 ]; }

# The toolchain and the emulator (host packages; Meson, ninja and the rest
# of the native build's come from setup.sh, below).
host_pkgs=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user)
# The arm64 libraries: libc6 (the loader qemu runs: aarch64-linux-gnu.ini)
# and check (the test suites) are required, liburing optional, with the
# Meson option that builds without it.
# libstdc++6:arm64: the C++ tests (tests/cxx) run under qemu-user, whose
# arm64 loader searches the multiarch folders, not the cross compiler's
# /usr/aarch64-linux-gnu/lib (a machine without it fails them with "cannot
# open libstdc++.so.6").
lib_pkgs=(libc6:arm64 libstdc++6:arm64 check:arm64 liburing-dev:arm64)
declare -A lib_off=([liburing-dev:arm64]=-Dio_uring=disabled)

export DEBIAN_FRONTEND=noninteractive
missing=()
for p in "${host_pkgs[@]}"; do installed "$p" || missing+=("$p"); done
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  if is_root; then
    say "adding the arm64 architecture (dpkg multiarch)"
    dpkg --add-architecture arm64
  else
    echo "cross-aarch64: run as root, or: sudo dpkg --add-architecture arm64" >&2
    exit 1
  fi
fi
lib_missing=()
for p in "${lib_pkgs[@]}"; do installed "$p" || lib_missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ] || [ ${#lib_missing[@]} -gt 0 ]; then
  if ! is_root; then
    echo "cross-aarch64: missing Debian packages: ${missing[*]} ${lib_missing[*]}" >&2
    echo "cross-aarch64: run as root, or: sudo apt-get install ${missing[*]} ${lib_missing[*]}" >&2
    exit 1
  fi
  apt_update
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    apt_install "${missing[@]}"
  fi
  # One at a time, so that an optional library that does not install
  # (a multiarch conflict, say) only turns its feature off.
  for p in "${lib_missing[@]}"; do
    say "installing $p"
    if ! apt_install "$p"; then
      [ -n "${lib_off[$p]:-}" ] || { echo "cross-aarch64: $p is required" >&2; exit 1; }
      echo "cross-aarch64: $p did not install: building with ${lib_off[$p]}" >&2
    fi
  done
fi
# -Dwerror: a warning only the aarch64 compiler gives (alignment, the
# width of a type) fails the build.  Four seconds per stress test: qemu
# makes each second of stress fewer operations, but the point here is the
# code paths, not the races (see above).
opts=(-Djemalloc=disabled -Dstress_seconds=4 -Dwerror=true)
for p in "${!lib_off[@]}"; do installed "$p" || opts+=("${lib_off[$p]}"); done

cd "$here"
# setup.sh installs the native build's packages if missing, and
# configures (or reconfigures) and builds, quietly.
bash scripts/setup.sh "$builddir" --cross-file "$here/scripts/aarch64-linux-gnu.ini" \
  "${opts[@]}" "$@"
say "built $builddir"

# The suites to run, less the tests that hand a program the build made to
# another program (a host script, or test_bpstat's popen of bpstat): that
# program starts outside Meson's exe wrapper, and the kernel cannot run an
# aarch64 ELF without a binfmt_misc entry, which this script does not
# assume.  The rest runs through qemu-aarch64; every test Meson starts
# itself is an aarch64 program or a host script given no built program.
suites=(util fwait bufpool headers cxx stress tools)
mapfile -t tests < <(python3 - "$builddir" "${suites[@]}" <<'PY'
import json, os, subprocess, sys
build, suites = os.path.realpath(sys.argv[1]), set(sys.argv[2:])
intro = subprocess.run(['meson', 'introspect', '--tests', build],
                       check=True, capture_output=True, text=True).stdout
def built_program(arg):
    path = os.path.join(build, arg) if not os.path.isabs(arg) else arg
    if not os.path.realpath(path).startswith(build + os.sep) or not os.path.isfile(path):
        return False
    with open(path, 'rb') as f:
        return os.access(path, os.X_OK) and f.read(4) == b'\x7fELF'
left_out = []
for t in json.loads(intro):
    if not suites & {s.split(':')[-1] for s in t['suite']}:
        continue
    if any(built_program(a) for a in t['cmd'][1:]):
        left_out.append(t['name'])
    else:
        print(t['name'])
print(f"cross-aarch64: {len(left_out)} tests left out (they start a built program"
      f" outside the exe wrapper): {', '.join(left_out)}", file=sys.stderr)
PY
)
[ ${#tests[@]} -gt 0 ] || { echo "cross-aarch64: no tests found in $builddir" >&2; exit 1; }
say "running ${#tests[@]} tests of the suites ${suites[*]}"
# qemu runs the tests several times slower than the host, and the
# timeouts (Meson's per test, Check's per case) are the native ones: a
# margin for both.
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-3}
meson test -C "$builddir" --print-errorlogs --num-processes 2 --timeout-multiplier 3 "${tests[@]}"
say "passed"
