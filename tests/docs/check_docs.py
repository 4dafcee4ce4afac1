#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_docs.py - the facts docs/*.md and README.md quote agree with the code.

usage: check_docs.py SRCDIR BUILDDIR NM [--doc FILE]... [--expect KIND]

Each kind of fact the pages quote, checked against its one home:

  path     every repository path the pages quote (fwait/..., bufpool/...,
           tools/..., tests/..., docs/..., scripts/..., util/..., .ci/...;
           a glob such as tools/bpbench/crashtest*.c must match a file; an
           include name such as bufpool/bufpool.h is looked up under
           LIB/include/) exists in the source tree, or is a program the
           meson.build of its folder builds (tools/compare/ycsb-ref).
  name     every identifier quoted in `backticks` that has an underscore
           (bp_get, BP_PIN_MAX, test_timeout's robbed_waiter_...) occurs
           somewhere in the sources, or is one of EXTERNAL_NAMES (names of
           other projects the pages cite).
  symbols  a count of exported symbols quoted next to libfwait or
           libbufpool equals `nm -D --defined-only` of the built library;
           and each library exports only its prefixed API (fwait_, bp_), as
           bufpool.md says.
  test     every test a quoted `meson test -C build 'NAME'` names is
           registered (this build's list, or a test('NAME' of a
           meson.build, for tests another configuration adds).
  option   every --option quoted is one the tools, scripts or tests spell.
  commit   every commit quoted (7 to 40 hex digits) is in the history (in a
           git checkout; a tarball skips it).
  map      docs/architecture.md's tables of each library's files give
           each file the layer and the calls its head comment's Layer
           paragraph gives it (tests/layers checks those against nm).
  number   the numbers NUMBERS below (defaults, bounds, field widths) are
           quoted as the code defines them, every time a page or a public
           header's comment quotes them; a constant quoted with its value
           (`BP_IO_DEPTH_DEFAULT`, 128) has the value its #define gives it;
           and every size a _Static_assert in fwait/ or bufpool/ pins for a
           page ("docs/X.md: struct S N bytes") is quoted by that page, and
           no page quotes another size for that struct.

--doc FILE adds a page to check (the should-fail tests plant one wrong fact
in a page of their own).  --expect KIND: the run must find a failure of
that kind in a --doc page; it exits 1 if it does (the test is should_fail)
and 99 if it does not, so a planted fact that goes unnoticed fails the
test instead of passing it.  Exit 0: all agree; 1: a disagreement (each
printed as FILE:LINE: KIND: what); 99: a setup error.
"""
import glob
import os
import re
import subprocess
import sys

# Names of other projects that the pages cite in backticks: Linux, io_uring,
# PostgreSQL, Check (the test framework), fallocate(2).
EXTERNAL_NAMES = {
    'wake_up_bit', 'IORING_SETUP_SINGLE_ISSUER', 'DEFER_TASKRUN',
    'io_uring_wait_cqe', '_copy_to_iter', 'filemap_read', 'RBM_ZERO_AND_LOCK',
    'PUNCH_HOLE', 'full_page_writes', 'CK_FORK', 'abort_exclusive_wait',
}

TOP_DIRS = ('fwait', 'bufpool', 'tools', 'tests', 'docs', 'scripts', 'util', '.ci')

# (what, the pages' phrase with the number as group 1, source file, the
# source's phrase with the number as group 1, scale: source value / scale is
# what the pages quote, or 'log2': the pages quote 2 to the source's value).
# A page phrase may be an alternation; the group that matched is compared.  Each phrase must be found at least once in the
# pages and once in the source: a row nobody quotes any more is removed.
NUMBERS = [
    ('fwait table default buckets', r'default (\d+) buckets',
     'fwait/internal.h', r'#define FW_DEFAULT_BUCKETS (\d+)u', 1),
    ('fwait histogram shards', r'histogram in (\d+) cache-line shards',
     'fwait/internal.h', r'#define FW_HIST_SHARDS (\d+)u', 1),
    ('fair handoff age default', r'\(default (\d+) ms\) since it \*first\* queued',
     'fwait/include/fwait/fwait.h', r'#define FWAIT_FAIR_NS_DEFAULT (\d+)u', 1000000),
    ('spin default', r'`spin_ns` \(default (\d+) µs',
     'fwait/include/fwait/fwait.h', r'#define FWAIT_SPIN_NS_DEFAULT (\d+)u', 1000),
    ('long hold default', r'`handoff_hold_ns`\s+\(default (\d+) µs\)',
     'fwait/include/fwait/fwait.h', r'#define FWAIT_HANDOFF_HOLD_NS_DEFAULT (\d+)u', 1000),
    ('hold vote ceiling', r'saturating at 0 and\s+(\d+)',
     'fwait/internal.h', r'#define FW_HOLD_VOTE_MAX (\d+)u', 1),
    ('hold vote "long"', r'says "long" at (\d+) or more',
     'fwait/internal.h', r'#define FW_HOLD_VOTE_LONG (\d+)u', 1),
    ('clock run', r'run\s+of (\d+) frames',
     'bufpool/evict.c', r'#define CLOCK_RUN (\d+)u', 1),
    ('transient wait bound', r'at most (\d+) ms\s+\(`TRANSIENT_WAIT_NS`\)|rounds of at most (\d+) ms',
     'bufpool/evict.c', r'#define TRANSIENT_WAIT_NS \((\d+)u \* 1000u \* 1000u\)', 1),
    ('claim rounds of an untimed bp_get', r'(\d+) rounds of at most',
     'bufpool/evict.c', r'#define CLOCK_MAX_ROUNDS (\d+)', 1),
    ('partitions, small pool', r'default (\d+),\s+\d+\s+for (?:>=|≥)',
     'bufpool/pool.c', r'nframes >= \d+ \? \d+ : (\d+)\)', 1),
    ('partitions, big pool', r'default \d+,\s+(\d+)\s+for (?:>=|≥)',
     'bufpool/pool.c', r'nframes >= \d+ \? (\d+) : \d+\)', 1),
    ('big pool threshold', r'default \d+,\s+\d+\s+for (?:>=|≥) (\d+)\s+frames',
     'bufpool/pool.c', r'nframes >= (\d+) \?', 1),
    ('page table buckets, at least', r'rounded up to a power\s+of two, at least (\d+)',
     'bufpool/pool.c', r'if \(bshift < (\d+)\)\n\s+bshift = \1;', 'log2'),
    ('pin count field width', r'\((\d+) bits,',
     'bufpool/include/bufpool/bufpool.h', r'BP_PIN_MASK \(\(\(UINT32_C\(1\) << (\d+)\)', 1),
    ('latch count width', r'latch word \(64 bits; C = (\d+)\)',
     'bufpool/latch.c', r'#define BP_LATCH_COUNT_BITS (\d+)', 1),
    ('pages in one read I/O', r'readv into their frames, at most (\d+) pages',
     'bufpool/internal.h', r'#define BP_RUN_MAX (\d+)u', 1),
    ('files in a pool', r'up to (\d+) open at once',
     'bufpool/internal.h', r'#define BP_MAX_FILES (\d+)u', 1),
    ('page map directory', r'a directory of (\d+)\s+chunks',
     'bufpool/internal.h', r'#define BP_PMAP_DIR (\d+)u', 1),
    ('page map chunk', r'chunks of (\d+) four-byte entries',
     'bufpool/internal.h', r'#define BP_PMAP_CHUNK_SHIFT (\d+)', 'log2'),
    ('readahead streams per file', r'follows up to (\d+) streams at once',
     'bufpool/internal.h', r'#define BP_RA_STREAMS (\d+)u', 1),
    ('readahead pages default', r'next `readahead_pages` \(default (\d+)\)',
     'bufpool/include/bufpool/bufpool.h', r'#define BP_READAHEAD_DEFAULT (\d+)u', 1),
    ('nframes bound', r'nframes\b[^.]{0,120}?below 2\^(\d+)',
     'bufpool/pool.c', r'\*nframes >= \(UINT32_C\(1\) << (\d+)\)', 1),
]

FAILURES = []


def fail(kind, where, what):
    FAILURES.append((kind, where))
    print(f'{where}: {kind}: {what}')


def setup_error(msg):
    print(f'check_docs: setup error: {msg}')
    sys.exit(99)


def source_files(src):
    """Every file of the source tree (git's list where there is one)."""
    try:
        out = subprocess.run(['git', '-C', src, 'ls-files', '--cached', '--others', '--exclude-standard'], capture_output=True,
                             text=True, check=True).stdout.split('\n')
        files = [f for f in out if f]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for root, dirs, names in os.walk(src):
        dirs[:] = [d for d in dirs if d not in ('.git', 'build') and
                   not os.path.exists(os.path.join(root, d, 'meson-private'))]
        files += [os.path.relpath(os.path.join(root, n), src) for n in names]
    return files


def paragraphs(lines):
    """(first line number, the paragraph's lines joined by newlines)."""
    out, cur, start = [], [], 0
    for n, line in enumerate(lines, 1):
        if line.strip():
            if not cur:
                start = n
            cur.append(line.rstrip('\n'))
        elif cur:
            out.append((start, '\n'.join(cur)))
            cur = []
    if cur:
        out.append((start, '\n'.join(cur)))
    return out


def line_of(start, para, pos):
    return start + para.count('\n', 0, pos)


PATH_RX = re.compile(r'(?<![\w./<-])((?:' + '|'.join(re.escape(d) for d in TOP_DIRS) +
                     r')/[\w.+/*{}-]*[\w+*}-])')


def check_paths(doc, lines, fileset, dirset, src):
    for n, line in enumerate(lines, 1):
        for m in PATH_RX.finditer(line):
            p = m.group(1)
            if p.endswith('.') or p.endswith('-'):
                p = p.rstrip('.-')
            if p in fileset or p in dirset:
                continue
            if any(c in p for c in '*{'):
                if glob.glob(os.path.join(src, p)):
                    continue
            top = p.split('/')[0]
            if os.path.join(top, 'include', p) in fileset:
                continue
            if built_here(src, p, fileset):
                continue
            fail('path', f'{doc}:{n}', f'{p} is not in the source tree')


def built_here(src, p, fileset):
    """p names a program its folder's meson.build builds (a ninja target
    such as tests/fuzz/fuzz_bufpool)."""
    d, name = os.path.split(p)
    mb = os.path.join(d, 'meson.build')
    if mb not in fileset:
        return False
    with open(os.path.join(src, mb), errors='replace') as f:
        return re.search(r"executable\(\s*'" + re.escape(name) + "'", f.read()) is not None


NAME_RX = re.compile(r'(?<![-\w.])([A-Za-z_][A-Za-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9])(_?\*)?')


def known(name, star, words):
    """A name, a prefix (`kv_page_*`) or a suffix (`_MAX_US`) of one."""
    if name in words or name in EXTERNAL_NAMES:
        return True
    if star:
        return any(w.startswith(name) for w in words)
    if name.startswith('_'):
        return any(w.endswith(name) for w in words)
    return False


def check_names(doc, lines, words):
    for n, line in enumerate(lines, 1):
        for m in re.finditer(r'`([^`\n]+)`', line):
            for name, star in NAME_RX.findall(m.group(1)):
                if not known(name, star, words):
                    fail('name', f'{doc}:{n}', f'`{name}` occurs nowhere in the sources')


def prelinked(build):
    """Whether the build localized the archives' hidden symbols (meson.build:
    prelink_objects), as the summary it prints says."""
    try:
        with open(os.path.join(build, 'meson-logs', 'meson-log.txt'), errors='replace') as f:
            return re.search(r'localized archives\s*:\s*(?:\x1b\[[0-9;]*m)?(?:YES|true)\b',
                             f.read(), re.I) is not None
    except OSError:
        return False


def exported(nm, lib, how='-D'):
    try:
        out = subprocess.run([nm, how, '--defined-only', lib], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        setup_error(f'{nm} -D {lib}: {e}')
    # A versioned library (fwait/fwait.map) lists each version node as an
    # absolute symbol (A) and each symbol as name@@NODE: the API is the
    # names, without the nodes.
    # _.stapsdt.base: the USDT probes' weak hidden anchor, kept global in
    # the archives (scripts/prelink.sh says why); not API.
    return [f[2].split('@')[0] for f in (ln.split() for ln in out.splitlines())
            if len(f) == 3 and f[1] != 'A' and f[2] != '_.stapsdt.base']


def check_symbols(docs, build, nm):
    counts = {}
    for lib, prefix in (('fwait', 'fwait_'), ('bufpool', 'bp_')):
        path = os.path.join(build, lib, f'lib{lib}.so')
        if not os.path.exists(path):
            continue     # a static-only build: nothing to count
        syms = exported(nm, path)
        if not syms:
            setup_error(f'no symbols in {path}')
        counts[lib] = len(syms)
        for s in syms:
            if not s.startswith(prefix):
                fail('symbols', path, f'exports {s}, not {prefix}-prefixed API')
        archive = os.path.join(build, lib, f'lib{lib}.a')
        if os.path.exists(archive) and prelinked(build):
            extra = set(exported(nm, archive, '-g')) - set(syms)
            if extra:
                fail('symbols', archive, f'exports what lib{lib}.so does not: '
                     f'{" ".join(sorted(extra)[:5])}')
    rx = re.compile(r'lib(fwait|bufpool)\b[^\n]{0,80}?\b(\d+)\s*(?:exported\s+)?symbols|'
                    r'lib(fwait|bufpool)\.(?:so|a)\b[^|\n]*(?:\|[^|\n]*?)?\|\s*(\d+)\s*\|')
    for doc, lines in docs.items():
        for start, para in paragraphs(lines):
            for m in rx.finditer(para):
                lib = m.group(1) or m.group(3)
                n = int(m.group(2) or m.group(4))
                if lib in counts and n != counts[lib]:
                    fail('symbols', f'{doc}:{line_of(start, para, m.start())}',
                         f'quotes {n} symbols for lib{lib}; it exports {counts[lib]}')


def number_of(text, rx, scale, where):
    m = re.search(rx, text)
    if not m:
        fail('number', where, f'the code no longer says /{rx}/: update NUMBERS')
        return None
    v = int(m.group(1))
    if scale == 'log2':
        return 1 << v
    return v // scale if v % scale == 0 else v / scale


def check_numbers(docs, src):
    for what, doc_rx, path, src_rx, scale in NUMBERS:
        with open(os.path.join(src, path), errors='replace') as f:
            want = number_of(f.read(), src_rx, scale, path)
        if want is None:
            continue
        seen = False
        for doc, lines in docs.items():
            for start, para in paragraphs(lines):
                for m in re.finditer(doc_rx, para):
                    seen = True
                    g = next(i for i in range(1, len(m.groups()) + 1) if m.group(i))
                    got = int(m.group(g))
                    if got != want:
                        fail('number', f'{doc}:{line_of(start, para, m.start(g))}',
                             f'{what}: the page says {got}, {path} says {want}')
        if not seen:
            fail('number', 'docs', f'{what}: no page says /{doc_rx}/ any more: '
                 'update NUMBERS in tests/docs/check_docs.py')


DEFINE_RX = re.compile(r'^#define ([A-Z][A-Z0-9_]+)\s+\(?(\d+)u?\)?\s*(?:/[*].*)?$', re.M)
QUOTE_RX = re.compile(r'`?\b([A-Z][A-Z0-9_]{3,})`?(?:,| =| is)?\s\(?(\d+)\b(?![\^.\d])')


def check_defines(docs, src, fileset):
    """A constant quoted with its value (`BP_IO_DEPTH_DEFAULT`, 128) has
    the value its #define gives it."""
    defines = {}
    for path in sorted(fileset):
        if path.split('/')[0] in ('fwait', 'bufpool') and path.endswith(('.c', '.h')):
            with open(os.path.join(src, path), errors='replace') as f:
                for m in DEFINE_RX.finditer(f.read()):
                    defines.setdefault(m.group(1), (int(m.group(2)), path))
    for doc, lines in docs.items():
        for start, para in paragraphs(lines):
            for m in QUOTE_RX.finditer(para):
                name, got = m.group(1), int(m.group(2))
                if name in defines and defines[name][0] != got:
                    fail('number', f'{doc}:{line_of(start, para, m.start())}',
                         f'{name} quoted as {got}; {defines[name][1]} defines it as '
                         f'{defines[name][0]}')


ASSERT_RX = re.compile(r'_Static_assert\(sizeof\(struct (\w+)\) == (\d+),\s*'
                       r'"(docs/[\w.-]+\.md): struct \1 \2 bytes"\)')


def check_sizes(docs, src, fileset):
    pinned = {}
    for path in sorted(fileset):
        if path.split('/')[0] in ('fwait', 'bufpool') and path.endswith(('.c', '.h')):
            with open(os.path.join(src, path), errors='replace') as f:
                for m in ASSERT_RX.finditer(f.read()):
                    pinned[m.group(1)] = (int(m.group(2)), m.group(3), path)
    if not pinned:
        setup_error('no _Static_assert pins a size for a page')
    for struct, (size, page, path) in pinned.items():
        if page not in docs:
            fail('number', path, f'struct {struct}: pinned for {page}, which is not a page')
            continue
        quoted = False
        for start, para in paragraphs(docs[page]):
            if re.search(rf'\b{struct}\b[^\n]*\n?[^\n]*?\b{size} bytes', para):
                quoted = True
        if not quoted:
            fail('number', page, f'does not quote struct {struct} as {size} bytes '
                 f'({path} pins it)')
    rx = re.compile(r'struct (\w+)\b[^.;|]{0,40}?\b(\d+) bytes')
    for doc, lines in docs.items():
        for start, para in paragraphs(lines):
            for m in rx.finditer(para):
                s = m.group(1)
                if s in pinned and int(m.group(2)) != pinned[s][0]:
                    fail('number', f'{doc}:{line_of(start, para, m.start())}',
                         f'struct {s} quoted as {m.group(2)} bytes; {pinned[s][2]} '
                         f'pins {pinned[s][0]}')


ROW_RX = re.compile(r'^\| (\d+) \| `(\w+\.c)` \| ([^|]*) \|', re.M)
LAYER_RX = re.compile(r'Layer (\d+) \([^)]*\): calls (.*?\.)\s*(?:\n \*\s*\n|\*/)', re.S)


def check_map(docs, src):
    """docs/architecture.md's file tables (a row | layer | `file.c` |
    calls | under ### fwait or ### bufpool) say what each file's Layer
    paragraph says (the one tests/layers checks)."""
    for page, lines in docs.items():
        rows = check_map_page(page, ''.join(lines), src)
        if page == 'docs/architecture.md' and rows == 0:
            setup_error(f'{page}: no file table rows found')


def check_map_page(page, text, src):
    section = {}
    for m in re.finditer(r'^### (\w+)$', text, re.M):
        section[m.start()] = m.group(1)
    rows = 0
    for m in ROW_RX.finditer(text):
        lib = [v for k, v in sorted(section.items()) if k < m.start()]
        if not lib or lib[-1] not in ('fwait', 'bufpool'):
            continue
        path = f'{lib[-1]}/{m.group(2)}'
        where = f'{page}:{text.count(chr(10), 0, m.start()) + 1}'
        try:
            with open(os.path.join(src, path), errors='replace') as f:
                head = f.read(6000)
        except OSError:
            fail('map', where, f'{path} is not in the source tree')
            continue
        lm = LAYER_RX.search(head)
        if not lm:
            setup_error(f'{path}: no Layer paragraph')
        rows += 1
        calls = set(re.findall(r'(\w+)\.c\b', lm.group(2)))
        said = {w for w in re.findall(r'[a-z]\w*', m.group(3))} - {'util', 's', 'emitter'}
        if int(m.group(1)) != int(lm.group(1)):
            fail('map', where, f'{path}: layer {m.group(1)}; its head says {lm.group(1)}')
        if said != calls:
            fail('map', where, f'{path}: calls {" ".join(sorted(said)) or "-"}; its head '
                 f'says {" ".join(sorted(calls)) or "-"}')
    return rows


def test_names(src, build, fileset):
    """The tests Meson registered (this build's, and every literal
    test('NAME' of a meson.build, for those another configuration adds)."""
    names = set()
    try:
        import json
        with open(os.path.join(build, 'meson-info', 'intro-tests.json')) as f:
            names.update(t['name'] for t in json.load(f))
    except (OSError, ValueError):
        pass
    for path in fileset:
        if path.endswith('meson.build'):
            with open(os.path.join(src, path), errors='replace') as f:
                names.update(re.findall(r"\btest\(\s*'([^']+)'", f.read()))
    return names


def check_tests(docs, names):
    """Every test a `meson test -C DIR 'NAME'...` line names is one."""
    for doc, lines in docs.items():
        for start, para in paragraphs(lines):
            for m in re.finditer(r'meson test -C \S+((?:\s+(?:\\\n\s*)?(?:--\S+(?: [\w-]+)?|\'[^\'\n]+\'))+)', para):
                for name in re.findall(r"'([^'\n]+)'", m.group(1)):
                    if name not in names:
                        fail('test', f'{doc}:{line_of(start, para, m.start())}',
                             f"'{name}' is no test (meson test --list)")


# Options of programs outside the project that the pages quote (meson
# configure's, objcopy's).
EXTERNAL_OPTIONS = {'buildtype', 'only-section'}


def check_options(docs, src, fileset):
    """Every --option the pages quote is one the tools, scripts or tests
    spell somewhere (an option table's "name" or a --name)."""
    known = set(EXTERNAL_OPTIONS)
    for path in fileset:
        if path.startswith(('tools/', 'scripts/', 'tests/', 'util/', '.ci/')) or \
                path.endswith(('meson.build', 'meson_options.txt')):
            if path.startswith('tests/docs/'):
                continue
            try:
                with open(os.path.join(src, path), errors='replace') as f:
                    text = f.read()
            except OSError:
                continue
            known.update(re.findall(r'--([a-z][a-z0-9-]+)', text))
            known.update(re.findall(r'"([a-z][a-z0-9-]+)"', text))
    for doc, lines in docs.items():
        for n, line in enumerate(lines, 1):
            for o in re.findall(r'(?<![\w-])--([a-z][a-z0-9-]*[a-z0-9])(?![\w-])', line):
                if o not in known:
                    fail('option', f'{doc}:{n}', f'--{o} is no option of the tools or scripts')


def check_commits(docs, src):
    """Every commit the pages quote ("at commit 48fd739", "(5260f7a)") is
    in the repository's history; skipped outside a git checkout."""
    try:
        subprocess.run(['git', '-C', src, 'rev-parse', '--git-dir'], capture_output=True,
                       check=True)
    except (OSError, subprocess.CalledProcessError):
        return
    for doc, lines in docs.items():
        for n, line in enumerate(lines, 1):
            for c in re.findall(r'(?<![\w.-])([0-9a-f]{7,40})(?![\w.-])', line):
                if not (re.search('[a-f]', c) and re.search('[0-9]', c)):
                    continue
                r = subprocess.run(['git', '-C', src, 'cat-file', '-e', c + '^{commit}'],
                                   capture_output=True)
                if r.returncode != 0:
                    fail('commit', f'{doc}:{n}', f'{c} is no commit of this repository')


def main(argv):
    args, extra, expect = [], [], None
    it = iter(argv)
    for a in it:
        if a == '--doc':
            extra.append(next(it))
        elif a == '--expect':
            expect = next(it)
        else:
            args.append(a)
    if len(args) != 3:
        setup_error(__doc__.split('\n')[2])
    src, build, nm = args
    files = source_files(src)
    fileset = set(files)
    dirset = {'/'.join(f.split('/')[:i]) for f in files for i in range(1, f.count('/') + 1)}
    pages = ['README.md'] + sorted(f for f in files if f.startswith('docs/') and f.endswith('.md'))
    docs = {}
    for p in pages:
        with open(os.path.join(src, p), encoding='utf-8') as f:
            docs[p] = f.readlines()
    for p in extra:
        with open(p, encoding='utf-8') as f:
            docs[p] = f.readlines()
    words = set()
    for f in files:
        if f.endswith('.md') or f.startswith('tests/docs/'):
            continue
        try:
            with open(os.path.join(src, f), errors='replace') as fh:
                words.update(re.findall(r'[A-Za-z_][A-Za-z0-9_]*', fh.read()))
        except (OSError, UnicodeError):
            pass
    if 'bp_get' not in words:
        setup_error('the sources were not read')

    for doc, lines in docs.items():
        check_paths(doc, lines, fileset, dirset, src)
        check_names(doc, lines, words)
    check_symbols(docs, build, nm)
    check_map(docs, src)
    check_options(docs, src, fileset)
    check_commits(docs, src)
    check_tests(docs, test_names(src, build, fileset))
    headers = {}
    for h in ('fwait/include/fwait/fwait.h', 'bufpool/include/bufpool/bufpool.h'):
        with open(os.path.join(src, h), encoding='utf-8') as f:
            headers[h] = f.readlines()
    check_numbers({**docs, **headers}, src)
    check_defines(docs, src, fileset)
    check_sizes(docs, src, fileset)

    if expect:
        hit = [w for k, w in FAILURES if k == expect and any(w.startswith(p) for p in extra)]
        if not hit:
            print(f'check_docs: the planted {expect} fact in {extra} went unnoticed')
            return 99
        print(f'check_docs: the planted {expect} fact was found, as it must be')
        return 1
    if FAILURES:
        print(f'check_docs: {len(FAILURES)} disagreement(s) between the pages and the code')
        return 1
    print(f'check_docs: ok: {len(docs)} pages agree with the code')
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main(sys.argv[1:]))
    except SystemExit:
        raise
    except Exception as e:  # a bug here must not pass a should_fail test
        print(f'check_docs: setup error: {e!r}')
        sys.exit(99)
