#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/consumer/run.sh - use fwait and bufpool as a consumer would, from a
# fresh copy of this repository in a temporary directory (CI: .ci/run).
#
#   (a) install: configure with -Dtools=disabled -Dtests=disabled
#       -Ddefault_library=both, install into a temporary prefix; the include
#       directory holds only the public headers (fwait/, bufpool/); `man
#       bp_get` with MANPATH=<prefix>/share/man finds bp_get.3 and shows
#       its family's page (docs/man), and no section 1 is installed; from
#       here pkg-config sees only the prefix's .pc files
#       (PKG_CONFIG_LIBDIR), as on a machine without jemalloc's and
#       liburing's -dev packages: bufpool's Requires and Requires.private
#       list neither, --static --libs has their -l flags; the C
#       consumer (cc) and the C++ one (g++ -std=c++17) are built with
#       `pkg-config --cflags --libs bufpool` (shared: the consumer binary
#       does not get libjemalloc as NEEDED, and its malloc stays libc's)
#       and with `--static` (cc -static), and run; libbufpool.so's
#       RUNPATH is $ORIGIN.  Before the install,
#       tests/consumer/pkgconfig/link.sh builds consumer.c from the build
#       tree (PKG_CONFIG_PATH=BUILD/meson-uninstalled) with each recipe:
#       shared, the archives picked with -Wl,-Bstatic, fully static; after
#       it, from the install with the archives recipe.
#   (b) subproject: tests/consumer/meson.build as a Meson project with the
#       repository under subprojects/fb-lib (not "fwait") found through
#       fwait-bufpool.wrap's [provide] section, default_library=static:
#       `meson test --list` shows only the consumer's two tests, no tool
#       target is configured or built, `meson install` installs only the
#       libraries, headers, pkg-config files, CMake packages and
#       share/doc/fwait-bufpool's LICENSE and README.md, and the tests pass.
#   (c) CMake: tests/consumer/cmake/CMakeLists.txt, find_package(bufpool)
#       with CMAKE_PREFIX_PATH alone, against (a)'s prefix (shared and
#       archives) and (b)'s install (archives only, a multiarch libdir,
#       under a DESTDIR: the package finds its prefix from its own place).
#       Against (a): the program linked with bufpool::bufpool needs
#       libbufpool.so and libfwait.so and starts with its rpath alone (no
#       LD_LIBRARY_PATH), as does the pool-only one (--as-needed: needs
#       libbufpool.so alone); the one linked with bufpool::bufpool_static
#       needs neither library.  Against (b): bufpool::bufpool is the
#       archive, so neither program needs them.  All run.
#
# The copy is of the files git tracks plus untracked ones it does not ignore,
# as they are in the working tree.  CC (default cc) and CXX (default g++)
# choose the compilers of (a) and (c).  Needs what scripts/setup.sh installs
# (cmake among them; run after it, as .ci/run does).  Takes well under a
# minute on 2 cores.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
CC=${CC:-cc}
CXX=${CXX:-g++}
tmp=$(mktemp -d /tmp/fb-consumer.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
step() { echo; echo "--- consumer: $*"; }
fail() { echo "consumer: FAIL: $*" >&2; exit 1; }
needed_of() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }

# The libraries the dynamic linker binds malloc to, running $1.
malloc_provider() {
	LD_DEBUG=bindings LD_DEBUG_OUTPUT=$tmp/ld "$1" >/dev/null 2>&1 || true
	cat "$tmp"/ld.* | sed -n "s/.* to \([^ ]*\) .*normal symbol \`malloc'.*/\1/p" | sort -u | tr '\n' ' '
	rm -f "$tmp"/ld.*
}

copy_repo() {
	local dest=$1
	mkdir -p "$dest"
	(cd "$here" &&
	 git ls-files -z --cached --others --exclude-standard |
	 while IFS= read -r -d '' f; do if [ -f "$f" ]; then printf '%s\0' "$f"; fi; done |
	 xargs -0 cp --parents -t "$dest")
}

# ---- (a) installed, through pkg-config -------------------------------------
step "install into a temporary prefix (-Dtools=disabled -Dtests=disabled)"
src=$tmp/src prefix=$tmp/prefix
copy_repo "$src"
meson setup "$tmp/build-install" "$src" --prefix="$prefix" --libdir=lib \
	-Dtools=disabled -Dtests=disabled -Ddefault_library=both >/dev/null
ninja -C "$tmp/build-install" >/dev/null

link_sh=$here/tests/consumer/pkgconfig/link.sh
for recipe in shared archives static; do
	step "from the build tree through pkg-config: link.sh $recipe"
	PKG_CONFIG_PATH=$tmp/build-install/meson-uninstalled CC=$CC \
		bash "$link_sh" "$recipe" "$tmp/build-tree" || fail "link.sh $recipe from the build tree"
done

meson install -C "$tmp/build-install" --quiet >/dev/null
(cd "$prefix" && find . -type f -o -type l | grep -v '^\./share/man/' | sort)
echo "./share/man/: $(find "$prefix/share/man" -type f | wc -l) pages"

expected=$( (cd "$src/fwait/include" && find . -name '*.h' -o -name '*.hpp'; cd "$src/bufpool/include" && find . -name '*.h' -o -name '*.hpp') | sort)
actual=$(cd "$prefix/include" && find . -type f -o -type l | sort)
[ "$actual" = "$expected" ] ||
	fail "installed include directory holds $(echo $actual), expected $(echo $expected)"
[ ! -e "$prefix/bin" ] || fail "something was installed in bin/: $(ls "$prefix/bin")"
echo "include/: only the public headers ($(echo $actual))"
for f in LICENSE README.md; do
	cmp -s "$src/$f" "$prefix/share/doc/fwait-bufpool/$f" || fail "share/doc/fwait-bufpool/$f not installed"
done

# The man pages (docs/man): man finds bp_get's link page in the prefix, and
# that page opens its family's (bp_page_access.3, which documents
# bp_get_timed too); no section 1 without the tools.
command -v man >/dev/null ||
	fail "no man to read the installed pages (scripts/setup.sh's test set installs man-db)"
man3=$prefix/share/man/man3
family=$(sed -n 's|^\.so man3/||p' "$man3/bp_get.3" 2>/dev/null) ||
	fail "no $man3/bp_get.3 installed"
[ -n "$family" ] && [ -f "$man3/$family" ] || fail "$man3/bp_get.3 is no link to an installed page"
# (man-db's man -w follows the .so link: either name is bp_get's page)
man_page=$(MANPATH=$prefix/share/man man -w bp_get) ||
	fail "man -w bp_get finds no page in $prefix/share/man"
[ "$man_page" = "$man3/bp_get.3" ] || [ "$man_page" = "$man3/$family" ] ||
	fail "man -w bp_get is '$man_page', not $man3/bp_get.3 (or $family, its target)"
man_text=$(MANPATH=$prefix/share/man MANPAGER=cat MANWIDTH=80 man bp_get 2>&1) ||
	fail "man bp_get from the prefix: $man_text"
grep -q 'bp_get_timed' <<<"$man_text" ||
	fail "man bp_get does not show $family (no bp_get_timed in it): $(head -5 <<<"$man_text")"
[ ! -e "$prefix/share/man/man1" ] || fail "section 1 pages installed without the tools"
echo "man -w bp_get: $man_page; man bp_get shows $family, which documents bp_get_timed too"

# pkg-config sees the prefix's .pc files and nothing else (PKG_CONFIG_LIBDIR
# replaces the system folders): a consumer without jemalloc.pc or
# liburing.pc (no libjemalloc-dev, liburing-dev) must get every answer
# below; jemalloc and liburing are only in bufpool.pc's Libs.private.
export PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig PKG_CONFIG_PATH=
for q in "--cflags --libs" "--static --cflags --libs"; do
	# shellcheck disable=SC2086
	pkg-config $q bufpool >/dev/null ||
		fail "pkg-config $q bufpool fails without jemalloc.pc and liburing.pc"
done
version=$(pkg-config --modversion bufpool)
requires=$(pkg-config --print-requires bufpool)
requires_private=$(pkg-config --print-requires-private bufpool)
echo "pkg-config --print-requires bufpool:         " $requires
echo "pkg-config --print-requires-private bufpool: " $requires_private
echo "pkg-config --libs bufpool:                   " $(pkg-config --libs bufpool)
echo "pkg-config --static --libs bufpool:          " $(pkg-config --static --libs bufpool)
if grep -Eqw 'jemalloc|liburing' <<<"$requires $requires_private"; then
	fail "bufpool.pc lists jemalloc or liburing in Requires or Requires.private"
fi
if grep -Eqw -- '-ljemalloc|-luring' <<<"$(pkg-config --libs bufpool)"; then
	fail "pkg-config --libs bufpool puts -ljemalloc or -luring on a shared link"
fi
# What libbufpool.so was linked with, the archive's static link needs.
lib_needed=$(needed_of "$prefix/lib/libbufpool.so")
with_jemalloc=0
for l in jemalloc uring; do
	if grep -Eq "(^| )lib$l\.so" <<<"$lib_needed"; then
		[ $l = jemalloc ] && with_jemalloc=1
		grep -qw -- "-l$l" <<<"$(pkg-config --static --libs bufpool)" ||
			fail "pkg-config --static --libs bufpool lacks -l$l"
	fi
done

cflags=$(pkg-config --cflags bufpool)
libs=$(pkg-config --libs bufpool)
static_libs=$(pkg-config --static --libs bufpool)
rpath=-Wl,-rpath,$(pkg-config --variable=libdir bufpool)
cd "$tmp"

step "shared link: $CC and $CXX -std=c++17 with pkg-config --cflags --libs bufpool"
# shellcheck disable=SC2086
$CC -std=c11 -Wall -Wextra -Werror $cflags "$here/tests/consumer/consumer.c" -o c-shared $libs $rpath
# shellcheck disable=SC2086
$CXX -std=c++17 -Wall -Wextra -Werror $cflags "$here/tests/consumer/consumer.cpp" -o cxx-shared $libs $rpath
for exe in c-shared cxx-shared; do
	needed=$(readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
	echo "$exe NEEDED: $needed"
	grep -q 'libbufpool\.so' <<<"$needed" || fail "$exe does not need libbufpool.so"
	if grep -q jemalloc <<<"$needed"; then fail "$exe has libjemalloc as NEEDED"; fi
	# Which library the process's malloc binds to (libjemalloc is loaded,
	# as libbufpool's dependency, after libc: it is not the allocator).
	malloc_from=$(malloc_provider "./$exe")
	echo "$exe malloc binds to: $malloc_from"
	if grep -q jemalloc <<<"$malloc_from"; then fail "$exe: jemalloc became the process's malloc"; fi
	"./$exe"
done

step "RUNPATH: libbufpool.so finds libfwait.so itself, from any prefix"
# (bufpool/meson.build, install_rpath; (c)'s consumer-pool-only shows a
# program that needs libbufpool.so alone starting with its rpath alone.)
runpath=$(readelf -d "$prefix/lib/libbufpool.so" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
echo "libbufpool.so RUNPATH: ${runpath:-(none)}"
# shellcheck disable=SC2016
[ "$runpath" = '$ORIGIN' ] || fail "libbufpool.so's RUNPATH is '$runpath', expected \$ORIGIN"

step "static link: $CC -static and $CXX -static with pkg-config --static --cflags --libs bufpool"
# shellcheck disable=SC2086
$CC -static -std=c11 -Wall -Wextra -Werror $cflags "$here/tests/consumer/consumer.c" -o c-static $static_libs
# shellcheck disable=SC2086
$CXX -static -std=c++17 -Wall -Wextra -Werror $cflags "$here/tests/consumer/consumer.cpp" -o cxx-static $static_libs
for exe in c-static cxx-static; do
	if readelf -d "$exe" 2>/dev/null | grep -q NEEDED; then fail "$exe is not fully static"; fi
	if [ $with_jemalloc = 1 ]; then
		syms=$(nm "$exe")
		grep -qw mallocx <<<"$syms" || fail "$exe does not contain jemalloc"
		# jemalloc's malloc, not glibc's (no __libc_malloc linked in).
		if grep -qw __libc_malloc <<<"$syms"; then fail "$exe: glibc's malloc linked in as well"; fi
	fi
	echo "$exe: fully static$([ $with_jemalloc = 1 ] && echo ", jemalloc linked in (the process's malloc)")"
	"./$exe"
done

step "the archives picked, libc shared: link.sh archives"
CC=$CC bash "$link_sh" archives "$tmp/installed" || fail "link.sh archives from the install"
unset PKG_CONFIG_PATH PKG_CONFIG_LIBDIR

# ---- (b) as a Meson subproject under another folder name -------------------
step "Meson subproject: subprojects/fb-lib + fwait-bufpool.wrap, default_library=static"
cons=$tmp/consumer
mkdir -p "$cons/subprojects"
cp "$here/tests/consumer/meson.build" "$here/tests/consumer/consumer.c" \
   "$here/tests/consumer/consumer.cpp" "$cons/"
cp "$here/tests/consumer/fwait-bufpool.wrap" "$cons/subprojects/"
copy_repo "$cons/subprojects/fb-lib"
# --force-fallback-for: the subproject even where a bufpool is installed.
meson setup "$cons/build" "$cons" --force-fallback-for=fwait,bufpool >"$tmp/setup.log" ||
	{ cat "$tmp/setup.log"; fail "meson setup of the consumer"; }
grep -E "Dependency (fwait|bufpool)|default_library|tools|tests" "$tmp/setup.log" || true

# (meson test --list builds first: ninja's line is not a test)
tests=$(meson test -C "$cons/build" --list 2>/dev/null | grep -v '^ninja: ')
echo "meson test --list:"; echo "$tests" | sed 's/^/  /'
[ "$tests" = "$(printf 'consumer c\nconsumer c++')" ] ||
	fail "meson test --list shows more than the consumer's own two tests"

ninja -C "$cons/build" >/dev/null
targets=$(meson introspect --targets "$cons/build" |
	  python3 -c 'import json, sys; print("\n".join(sorted(t["name"] for t in json.load(sys.stdin))))')
echo "targets:" $targets
allowed='^(consumer-c|consumer-cxx|fwait|bufpool|fwait_core|bufpool_core|fwait-prelinked|bufpool-prelinked)$'
if grep -Evq "$allowed" <<<"$targets"; then
	fail "targets other than the libraries: $(grep -Ev "$allowed" <<<"$targets" | tr '\n' ' ')"
fi
for tool in bpbench bpstat fwait-herd; do
	if [ -n "$(find "$cons/build" -name "$tool" -type f)" ]; then fail "$tool was built"; fi
done
sub=$cons/build/subprojects/fb-lib
[ -f "$sub/bufpool/libbufpool.a" ] && [ -f "$sub/fwait/libfwait.a" ] ||
	fail "no static libbufpool.a / libfwait.a in the subproject"
if [ -n "$(find "$sub" -name '*.so*' -type f)" ]; then
	fail "shared libraries built despite default_library=static: $(find "$sub" -name '*.so*' -type f)"
fi
echo "subproject: static libraries only ($(cd "$sub" && find . -name 'lib*.a' | sort | tr '\n' ' '))"
for exe in consumer-c consumer-cxx; do
	echo "$exe NEEDED: $(readelf -d "$cons/build/$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
	# (static libbufpool.a: libjemalloc comes before libc, so it is malloc)
	echo "$exe malloc binds to: $(malloc_provider "$cons/build/$exe")"
done

meson install -C "$cons/build" --destdir "$tmp/destdir" --quiet >/dev/null
installed=$(cd "$tmp/destdir" && find . -type f -o -type l | sort)
echo "meson install of the consumer:"; echo "$installed" | sed 's/^/  /'
if grep -Ev '/include/(fwait|bufpool)/[^/]+\.h(pp)?$|/lib(/[^/]+)?/(pkgconfig/(fwait|bufpool)\.pc|lib(fwait|bufpool)\.a|cmake/(fwait|bufpool)/(fwait|bufpool)Config(Version)?\.cmake)$|/share/doc/fwait-bufpool/(LICENSE|README\.md)$' <<<"$installed" | grep -q .; then
	fail "the subproject installs more than its libraries, headers, pkg-config files, CMake packages, LICENSE and README"
fi
grep -q '/share/doc/fwait-bufpool/LICENSE$' <<<"$installed" || fail "the subproject does not install its LICENSE"


meson test -C "$cons/build" --print-errorlogs

# ---- (c) CMake: find_package(bufpool) -------------------------------------
# cmake_consumer PREFIX BUILDDIR: configure tests/consumer/cmake against
# PREFIX and build it (CMakeLists.txt checks find_package's answers).
cmake_consumer() {
	CC=$CC cmake -S "$here/tests/consumer/cmake" -B "$2" -G Ninja \
		-DCMAKE_PREFIX_PATH="$1" -DFB_VERSION="$version" >"$2.configure.log" 2>&1 ||
		{ cat "$2.configure.log"; fail "cmake could not configure tests/consumer/cmake against $1"; }
	grep -- '-- bufpool ' "$2.configure.log"
	ninja -C "$2" >"$2.build.log" 2>&1 ||
		{ cat "$2.build.log"; fail "building tests/consumer/cmake against $1"; }
}
# run_alone EXE: run it with no LD_LIBRARY_PATH (its rpath alone).
run_alone() { env -u LD_LIBRARY_PATH "$1" || fail "$(basename "$1") did not run with its rpath alone"; }

step "CMake: find_package(bufpool) from (a)'s prefix: bufpool::bufpool (shared), bufpool::bufpool_static"
cb=$tmp/cmake-both
cmake_consumer "$prefix" "$cb"
for exe in consumer-default consumer-pool-only consumer-static; do
	needed=$(needed_of "$cb/$exe")
	echo "$exe NEEDED: $needed"
	case $exe in
	consumer-default)
		grep -q 'libbufpool\.so' <<<"$needed" && grep -q 'libfwait\.so' <<<"$needed" ||
			fail "$exe does not need libbufpool.so and libfwait.so" ;;
	consumer-pool-only)
		grep -q 'libbufpool\.so' <<<"$needed" || fail "$exe does not need libbufpool.so"
		if grep -q 'libfwait\.so' <<<"$needed"; then fail "$exe needs libfwait.so itself"; fi ;;
	consumer-static)
		if grep -Eq 'lib(bufpool|fwait)\.so' <<<"$needed"; then
			fail "$exe needs a shared libbufpool or libfwait"
		fi ;;
	esac
	run_alone "$cb/$exe"
done

step "CMake: find_package(bufpool) from (b)'s install (archives only, under DESTDIR)"
cons_prefix=$(meson introspect --buildoptions "$cons/build" |
	python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
cs=$tmp/cmake-static
cmake_consumer "$tmp/destdir$cons_prefix" "$cs"
grep -q 'bufpool::bufpool is INTERFACE_LIBRARY' "$cs.configure.log" ||
	fail "bufpool::bufpool is not the archive's interface target"
for exe in consumer-default consumer-static; do
	needed=$(needed_of "$cs/$exe")
	echo "$exe NEEDED: $needed"
	if grep -Eq 'lib(bufpool|fwait)\.so' <<<"$needed"; then
		fail "$exe needs a shared libbufpool or libfwait"
	fi
	run_alone "$cs/$exe"
done

step "ok"
