#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gen_man.py - the manual pages, each from the one source that also feeds
the docs: section 3 from the public headers, section 1 from docs/man/*.1.md.

usage: gen_man.py --list INPUT...
       gen_man.py --outdir DIR [--version V] INPUT...
       gen_man.py --check [--build-root DIR --nm NM] [--symbols FILE]...
                  [--tool NAME=PROGRAM]... [--expect KIND] INPUT...
       gen_man.py --lint GROFF PAGE...

INPUT: a public header (.h: families and links; .hpp: an overview page
only) or a tool's page (NAME.1.md).

Section 3.  A header is its own reference: its opening comment, then
declarations grouped in sections by `/* ---- Title ---- */` lines.  Each
section is a family page (FAMILY_NAMES gives its name, e.g.
bp_page_access.3): NAME lists its functions, SYNOPSIS has the #include and
its declarations verbatim (inline functions without their bodies),
DESCRIPTION its comments in order, each under the names it documents,
SEE ALSO the overview page and the sibling families.  The declarations
before the first section make a family too (PREAMBLE_FAMILIES).  Each
header has an overview page (fwait.3, bufpool.3: its opening comment and
its families), and every public function and function-like macro a
one-line link page (`.so man3/FAMILY.3`), so `man bp_get` opens
bp_page_access.3.  Not API, not in any page: names with a leading or
trailing underscore (fwait.h's fwait_hl_*_ helpers), macros the header
#undefs, and the comment that documents only those.  Conditionals are
read as a C compiler reads them (__cplusplus and every other macro
undefined; include guards taken).

Section 1.  NAME.1.md is restricted Markdown, a docs page in its own right:
`# H` a section (.SH), `## H` a subsection (.SS), paragraphs, ``` blocks
(.nf), `- ` bullets (.IP), a definition (.TP): a line of `code` spans only
(`-i`, `--interval S`, and a backslash, Markdown's line break) followed by
indented lines; inline `code` is bold,
*x* italic, [text](link) is the text.

--list prints the pages' file names, one a line (Meson's outputs); --outdir
writes them.  --check (suite docs) fails when the pages could drift from
what they document: every public function a header declares (a plain
scan of the header, apart from the parser) and every function the built
libraries export (nm -D, BUILD/fwait/libfwait.so and
BUILD/bufpool/libbufpool.so where built; --symbols FILE: more names, one a
line) has a page; and every option that `PROGRAM --help` prints is a
definition of NAME.1.md (those of `PROGRAM SUB --help` under its `## SUB`
of COMMANDS, and every subcommand the help lists has one).  --expect KIND
(function, option): the run must find a failure of that kind; it then exits
1 (the test is should_fail), else 99.  --lint runs GROFF -man -Tutf8 -ww -z
over every page that is not a link and fails on any warning; a link's
target must be one of the pages.  Exit 0: all well; 1: failures, each
printed; 99: a setup error.
"""
import os
import re
import subprocess
import sys

PROJECT = 'fwait-bufpool'

# The family page of each section, by header and title: stable names that
# do not change when a title is reworded only slightly (a title not listed
# gets prefix_first_two_words).  None of them is a function's name, so a
# function's link page never overwrites a family page.
FAMILY_NAMES = {
    ('fwait.h', "Bit operations on a caller's word; key = (word, bit)"): 'fwait_bit',
    ('fwait.h', "The same on a caller's 64-bit word"): 'fwait_bit64',
    ('fwait.h', 'Generic keyed waits (wait_event_filtered)'): 'fwait_keyed',
    ('fwait.h', 'Keyed waits, complete: how a wait ended, wake reports, tokens'): 'fwait_keyed_ex',
    ('fwait.h', "Hybrid latches on a caller's 64-bit word"): 'fwait_hlatch',
    ('fwait.h', 'Statistics and introspection'): 'fwait_stats',
    ('bufpool.h', 'Sizes and defaults'): 'bp_sizes',
    ('bufpool.h', 'Frame state word'): 'bp_state',
    ('bufpool.h', 'Configuration'): 'bp_config',
    ('bufpool.h', 'Page access'): 'bp_page_access',
    ('bufpool.h', 'Content latches'): 'bp_content_latch',
    ('bufpool.h', 'Optimistic reads'): 'bp_optimistic_read',
    ('bufpool.h', 'Write-back, eviction'): 'bp_writeback',
    ('bufpool.h', "Fault injection (the pool's I/O layer)"): 'bp_fault',
    ('bufpool.h', 'I/O tracing (tests: what a power failure would leave)'): 'bp_io_trace',
    ('bufpool.h', 'Statistics and introspection'): 'bp_stats',
    ('bufpool.h', 'Small accessors'): 'bp_accessors',
    ('bufpool.h', 'Files: many per pool'): 'bp_file',
}
# The declarations before a header's first section: (page, title).
PREAMBLE_FAMILIES = {
    'fwait.h': ('fwait_table', 'Wait tables: version, word type, configuration, creation'),
    'bufpool.h': ('bp_version', 'Version of the library'),
}
PREFIXES = ('fwait_', 'FWAIT_', 'bp_', 'BP_')
MARKER_RX = re.compile(r'^/\* ---- (.*?)\s*-*\s*(?:\*/)?\s*$')


def setup_error(msg):
    print(f'gen_man: setup error: {msg}')
    sys.exit(99)


# ---- Reading a header --------------------------------------------------------

def mask(text):
    """text with every comment's and string's characters blanked (newlines
    kept, so lines and offsets stay), and for each line whether it ends
    inside a comment."""
    out, in_comment, i, n = [], [], 0, len(text)
    state = None     # None, 'c' (/* */), 's' ("), 'q' (')
    while i < n:
        ch = text[i]
        if state is None:
            if text.startswith('/*', i):
                state = 'c'
                out.append('  ')
                i += 2
                continue
            if text.startswith('//', i):
                j = text.find('\n', i)
                j = n if j < 0 else j
                out.append(' ' * (j - i))
                i = j
                continue
            if ch in '"\'':
                state = 's' if ch == '"' else 'q'
            out.append(ch)
        elif state == 'c':
            if text.startswith('*/', i):
                out.append('  ')
                state = None
                i += 2
                continue
            out.append('\n' if ch == '\n' else ' ')
        else:
            if ch == '\\' and i + 1 < n and text[i + 1] != '\n':
                out.append('  ')
                i += 2
                continue
            if (ch == '"' and state == 's') or (ch == "'" and state == 'q'):
                state = None
                out.append(ch)
            else:
                out.append('\n' if ch == '\n' else ' ')
        if ch == '\n':
            in_comment.append(state == 'c')
        i += 1
    in_comment.append(state == 'c')
    return ''.join(out), in_comment


def active_lines(masked_lines):
    """Which lines a C compiler reads (every macro undefined, so
    #ifdef __cplusplus is false and #ifndef GUARD true), and which are
    directives of conditionals (never shown)."""
    keep, stack = [], []
    for m in masked_lines:
        s = m.strip()
        d = re.match(r'#\s*(\w+)', s)
        word = d.group(1) if d else None
        if word in ('if', 'ifdef', 'ifndef'):
            cond = word == 'ifndef'
            stack.append([cond, cond])       # [this branch, any branch taken]
            keep.append(None)
            continue
        if word in ('elif', 'else'):
            top = stack[-1]
            top[0] = word == 'else' and not top[1]
            top[1] = top[1] or top[0]
            keep.append(None)
            continue
        if word == 'endif':
            stack.pop()
            keep.append(None)
            continue
        keep.append(all(b[0] for b in stack))
    return keep


class Item:
    """One comment, preprocessor directive or declaration of a header."""

    def __init__(self, kind, raw, masked, blank_before):
        self.kind = kind            # comment, marker, pp, decl
        self.raw = raw              # its lines, as written
        self.masked = masked        # the same with comments blanked
        self.blank_before = blank_before
        self.name = None            # what it declares
        self.role = None            # function, fmacro, macro, type, other
        self.noise = False          # an include, a pragma, an assertion, not API
        self.trailing = None        # a macro's or function's comment on its line

    def text(self):
        return '\n'.join(self.raw)


def split_items(text):
    masked, in_comment = mask(text)
    raw_lines, masked_lines = text.split('\n'), masked.split('\n')
    keep = active_lines(masked_lines)
    # The lines the compiler reads, conditionals' directives left out, so
    # a declaration with an #ifdef inside is read whole.
    sel = [k for k in range(len(raw_lines)) if keep[k]]
    raw_lines = [raw_lines[k] for k in sel]
    masked_lines = [masked_lines[k] for k in sel]
    in_comment = [in_comment[k] for k in sel]
    items, i, n, blank = [], 0, len(raw_lines), False
    while i < n:
        raw, m = raw_lines[i], masked_lines[i]
        if not raw.strip():
            blank = True
            i += 1
            continue
        start = i
        if not m.strip():                                   # a comment
            while in_comment[i] and i + 1 < n:
                i += 1
            kind = 'marker' if MARKER_RX.match(raw_lines[start].strip()) else 'comment'
        elif m.strip().startswith('#'):                     # a directive
            while (masked_lines[i].rstrip().endswith('\\') or in_comment[i]) and i + 1 < n:
                i += 1
            kind = 'pp'
        else:                                               # a declaration
            depth = 0
            while True:
                ml = masked_lines[i]
                depth += ml.count('{') + ml.count('(') - ml.count('}') - ml.count(')')
                s = ml.strip()
                if depth <= 0 and not in_comment[i] and (s.endswith(';') or s.endswith('}')):
                    break
                if i + 1 >= n:
                    break
                i += 1
            kind = 'decl'
        items.append(Item(kind, raw_lines[start:i + 1], masked_lines[start:i + 1], blank))
        blank = False
        i += 1
    return items


IDENT = r'[A-Za-z_]\w*'


def classify(item, guard, undefs):
    m = ' '.join(item.masked).strip()
    if item.kind == 'pp':
        d = re.match(r'#\s*(\w+)\s*(' + IDENT + r')?(\()?', m)
        word, name = d.group(1), d.group(2)
        if word != 'define' or name == guard:
            item.noise = True
            return
        item.name = name
        item.role = 'fmacro' if d.group(3) else 'macro'
    else:
        if re.match(r'(_Static_assert|static_assert)\b', m):
            item.noise = True
            return
        if m.startswith('typedef'):
            t = re.search(r'\(\s*\*\s*(' + IDENT + r')\s*\)', m) or \
                re.search(r'(' + IDENT + r')\s*\(', m) or \
                re.search(r'(' + IDENT + r')\s*;\s*$', m)
            item.name, item.role = t.group(1), 'type'
        elif re.match(r'(struct|enum|union)\s+' + IDENT + r'\s*[{;]', m):
            t = re.match(r'(struct|enum|union)\s+(' + IDENT + ')', m)
            item.name, item.role = f'{t.group(1)} {t.group(2)}', 'type'
        elif '(' in m:
            item.name = re.search(r'(' + IDENT + r')\s*\(', m).group(1)
            item.role = 'function'
        else:
            t = re.search(r'(' + IDENT + r')\s*(?:\[[^]]*\])?\s*;\s*$', m)
            item.name, item.role = (t.group(1) if t else m), 'other'
    bare = item.name.split()[-1]
    if bare.startswith('_') or bare.endswith('_') or bare in undefs:
        item.noise = True
        return
    # A macro's or function's comment on its own line (and the lines that
    # continue it) is its description.
    if item.role in ('macro', 'function') and '/*' in item.raw[0] and item.masked[0].strip():
        text = '\n'.join(item.raw)
        c = re.search(r'/\*(.*?)\*/', text[text.index('/*'):], re.S)
        if c:
            item.trailing = ' '.join(re.sub(r'\n\s*\*(?!/)', ' ', c.group(1)).split())


def display(item):
    """The declaration as SYNOPSIS shows it: an inline function's body
    becomes a semicolon."""
    if item.role == 'function':
        joined = '\n'.join(item.masked)
        at = joined.find('{')
        if at >= 0:
            return ('\n'.join(item.raw)[:at].rstrip() + ';').split('\n')
    return item.raw


def comment_lines(item):
    """A comment's text lines, relative indentation kept (the marker line
    of a section is its title, not text)."""
    lines = list(item.raw)
    if item.kind == 'marker':
        lines = lines[1:]
        if not lines:
            return []
    else:
        lines[0] = lines[0].split('/*', 1)[1]
    last = lines[-1]
    lines[-1] = last[:last.rfind('*/')] if '*/' in last else last
    out = []
    for ln in lines:
        s = ln.expandtabs(8)
        st = s.lstrip()
        if st.startswith('*') and not st.startswith('*/'):
            st = st[1:]
            s = st[1:] if st.startswith(' ') else st
        elif out:
            s = s[3:] if s.startswith('   ') else s.lstrip()
        else:
            s = s.strip()
        out.append(s.rstrip())
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    if out and len(out) == 1:
        out[0] = out[0].strip()
    return out


class Unit:
    """A comment and the declarations it documents (either may be absent)."""

    def __init__(self, comment):
        self.comment = comment
        self.items = []

    def names(self):
        return [i for i in self.items if not i.noise]


class Family:
    def __init__(self, page, title):
        self.page, self.title, self.units = page, title, []

    def entries(self):
        return [i for u in self.units for i in u.names()]

    def functions(self):
        """The names that get a link page: functions, function-like macros."""
        return [i.name for i in self.entries() if i.role in ('function', 'fmacro')]


class Header:
    def __init__(self, path):
        self.path = path
        self.base = os.path.basename(path)
        self.stem = self.base.split('.')[0]
        self.include = '/'.join(path.replace(os.sep, '/').split('/')[-2:])
        with open(path, encoding='utf-8') as f:
            self.text = f.read()
        self.overview = []
        self.families = []
        self.parse()

    def parse(self):
        items = split_items(self.text)
        comments = [i for i in items if i.kind == 'comment' and 'SPDX-License' not in i.text()]
        if not comments:
            setup_error(f'{self.path}: no opening comment')
        self.overview = comment_lines(comments[0])
        if self.base.endswith('.hpp'):
            return              # C++: the overview page only
        guard = None
        g = re.search(r'^#ifndef (\w+)\n#define \1\b', self.text, re.M)
        if g:
            guard = g.group(1)
        undefs = set(re.findall(r'^#\s*undef\s+(\w+)', self.text, re.M))
        page, title = PREAMBLE_FAMILIES.get(self.base, (f'{self.stem}_base', self.stem))
        fam = Family(page, title)
        unit = None
        for it in items[items.index(comments[0]) + 1:]:
            if it.kind == 'marker':
                self.add(fam)
                t = MARKER_RX.match(it.raw[0].strip()).group(1)
                fam = Family(FAMILY_NAMES.get((self.base, t)) or self.slug(t), t)
                unit = Unit(it) if len(it.raw) > 1 else None
                if unit:
                    fam.units.append(unit)
                continue
            if it.kind == 'comment':
                unit = Unit(it)
                fam.units.append(unit)
                continue
            classify(it, guard, undefs)
            if unit is None or it.blank_before:
                unit = Unit(None)
                fam.units.append(unit)
            unit.items.append(it)
        self.add(fam)

    def add(self, fam):
        # A unit whose every declaration is hidden (internal, an include)
        # goes, its comment with it: that comment documents no API.
        fam.units = [u for u in fam.units if not u.items or u.names()]
        if fam.units:
            self.families.append(fam)

    def slug(self, title):
        words = re.findall(r'[a-z0-9]+', re.split(r'[(:;,]', title)[0].lower())
        words = [w for w in words if w not in ('the', 'a', 'an', 'of', 'on')]
        prefix = 'bp' if self.stem == 'bufpool' else self.stem
        return '_'.join([prefix] + words[:2])


# ---- roff ---------------------------------------------------------------------

def esc(s, code=False):
    """Text for roff: backslashes, a leading control character, minus signs
    (every - in code, an option's or a negative number's elsewhere) and
    non-ASCII characters escaped."""
    s = s.replace('\\', '\\e')
    if code:
        s = s.replace('-', '\\-')
    else:
        s = re.sub(r'(?<![\w\\-])-(?=[-\w])', r'\\-', s)
        s = re.sub(r'(?<=\\-)-', r'\\-', s)
    s = ''.join(c if ord(c) < 128 else f'\\[u{ord(c):04X}]' for c in s)
    if s.startswith(('.', "'")):
        s = '\\&' + s
    return s


def indent_of(s):
    return len(s) - len(s.lstrip(' '))


def prose(lines, need_pp=True, top=True):
    """A comment's text as roff: paragraphs filled; a heading underlined
    with dashes a subsection; `- ` items bullets; indented lines (tables,
    code) as they are."""
    out, i, n = [], 0, len(lines)
    while i < n:
        ln = lines[i]
        st = ln.strip()
        if not st:
            need_pp = True
            i += 1
            continue
        ind = indent_of(ln)
        if i + 1 < n and re.fullmatch(r'-{3,}', lines[i + 1].strip()) and ind == 0:
            # a subsection of the page; inside a family's entry, whose
            # indentation a .SS would end, a bold line
            out += ['.SS ' + esc(st)] if top else ['.PP', f'\\fB{esc(st)}\\fR', '.br']
            need_pp = False
            i += 2
            continue
        if st.startswith('- '):
            text = [st[2:]]
            i += 1
            while i < n and lines[i].strip() and indent_of(lines[i]) > ind and \
                    not lines[i].strip().startswith('- '):
                text.append(lines[i].strip())
                i += 1
            out.append('.IP \\(bu 2')
            out += [esc(t) for t in text]
            need_pp = True
            continue
        if ind >= 2:
            block = []
            while i < n and lines[i].strip() and indent_of(lines[i]) >= 2 and \
                    not lines[i].strip().startswith('- '):
                block.append(lines[i])
                i += 1
            base = min(indent_of(b) for b in block)
            out += ['.PP' if need_pp else '.br', '.RS 2', '.nf']
            out += [esc(b[base:].rstrip(), code=True) for b in block]
            out += ['.fi', '.RE']
            need_pp = True
            continue
        if need_pp:
            out.append('.PP')
            need_pp = False
        out.append(esc(st))
        i += 1
    return out


def th(name, section, title):
    return [f'.\\" Generated by docs/man/gen_man.py from {title}: edit that, not this.',
            f'.TH "{name.upper()}" "{section}" "" "{PROJECT} {VERSION}" "{PROJECT}"',
            '.nh', '.ad l']


def see_also(names):
    """Man page references "name(sec)", as .BR lines separated by commas."""
    out = []
    for k, ref in enumerate(names):
        name, sec = re.match(r'(.*)\((\w+)\)$', ref).groups()
        out.append(f'.BR {esc(name)} ({sec}){"," if k + 1 < len(names) else ""}')
    return out


def ref_names(names):
    return ', '.join(f'\\fB{esc(n)}\\fR' + ('()' if r == 'function' else '')
                     for n, r in names)


def family_page(h, fam):
    src = h.include
    # (a type's bare name: whatis reads NAME as names separated by commas)
    names = fam.functions() or [e.name.split()[-1] for e in fam.entries()]
    out = th(fam.page, 3, src)
    out += ['.SH NAME', esc(', '.join(names)) + ' \\- ' + esc(fam.title[0].lower() + fam.title[1:])]
    out += ['.SH SYNOPSIS', '.nf', f'\\fB#include <{src}>\\fR']
    for u in fam.units:
        if u.names():
            out.append('.sp')
            for it in u.names():
                out += [esc(ln.expandtabs(8).rstrip(), code=True) for ln in display(it)]
    out += ['.fi', '.PP', f'Compile and link with \\fIpkg\\-config \\-\\-cflags \\-\\-libs {h.stem}\\fR.']
    out.append('.SH DESCRIPTION')
    for u in fam.units:
        names = [(i.name, i.role) for i in u.names()]
        text = comment_lines(u.comment) if u.comment else []
        own = [i for i in u.names() if i.trailing]
        if not text and not own:
            continue
        if names and text:
            out += ['.PP', ref_names(names), '.RS 4']
            out += prose(text, need_pp=False, top=False)
            out.append('.RE')
        elif text:
            out += prose(text)
        for i in own:
            out += ['.TP', ref_names([(i.name, i.role)]), esc(i.trailing)]
    siblings = [f'{f.page}(3)' for f in h.families if f is not fam]
    out += ['.SH SEE ALSO'] + see_also([f'{h.stem}(3)'] + siblings)
    return out


def overview_page(h, headers, tools):
    lines = list(h.overview)
    first = []
    while lines and lines[0].strip():
        first.append(lines.pop(0).strip())
    what = ' '.join(first)
    what = re.sub(r'^\S+\s+-\s+', '', what).rstrip('.')
    name = h.base if h.base.endswith('.hpp') else h.stem
    out = th(name, 3, h.include)
    out += ['.SH NAME', f'{esc(name)} \\- {esc(what)}']
    out += ['.SH SYNOPSIS', '.nf', f'\\fB#include <{h.include}>\\fR', '.fi']
    if not h.base.endswith('.hpp'):
        out += ['.PP', f'Compile and link with \\fIpkg\\-config \\-\\-cflags \\-\\-libs {h.stem}\\fR.']
    out.append('.SH DESCRIPTION')
    out += prose(lines)
    if h.families:
        out += ['.SS Function families', 'Each has its own page; every function has a page '
                'of its own name that opens its family\'s.']
        for f in h.families:
            out += ['.TP', f'\\fB{esc(f.page)}\\fR(3)', esc(f.title)]
            if f.functions():
                out += ['.br', esc(', '.join(f.functions()))]
    refs = [f'{f.page}(3)' for f in h.families]
    refs += [f'{o.base if o.base.endswith(".hpp") else o.stem}(3)' for o in headers if o is not h]
    refs += [f'{t}(1)' for t in tools]
    out += ['.SH SEE ALSO'] + see_also(refs)
    return out


# ---- Markdown (section 1) -------------------------------------------------------

def md_inline(s):
    """`code` bold, *x* italic, [text](link) the text; the rest escaped."""
    out, pos = [], 0
    for m in re.finditer(r'`([^`]+)`|\*([^*\s][^*]*)\*|\[([^\]]+)\]\([^)]*\)', s):
        out.append(esc(s[pos:m.start()]))
        if m.group(1) is not None:
            out.append('\\fB' + esc(m.group(1), code=True) + '\\fR')
        elif m.group(2) is not None:
            out.append('\\fI' + esc(m.group(2)) + '\\fR')
        else:
            out.append(md_inline(m.group(3)))
        pos = m.end()
    out.append(esc(s[pos:]))
    r = ''.join(out)
    return '\\&' + r if r.startswith(('.', "'")) else r


# (a trailing backslash, Markdown's line break, shows the definition under
# its term on a rendered docs page too)
TERM_RX = re.compile(r'^`[^`]+`(?:,? `[^`]+`)*\\?$')


def md_term(s):
    """A definition's term: each option bold, its argument italic."""
    parts = []
    for code in re.findall(r'`([^`]+)`', s):
        words = code.split(' ', 1)
        t = '\\fB' + esc(words[0], code=True) + '\\fR'
        if len(words) > 1:
            t += ' \\fI' + esc(words[1], code=True) + '\\fR'
        parts.append(t)
    return ', '.join(parts)


def md_blocks(text):
    """The page's blocks: ('h1'|'h2', title), ('p', lines), ('code', lines),
    ('bullet', lines), ('def', term, lines)."""
    text = re.sub(r'<!--.*?-->', '', text, flags=re.S)
    lines = text.split('\n')
    blocks, i, n = [], 0, len(lines)
    while i < n:
        ln = lines[i]
        st = ln.strip()
        if not st:
            i += 1
            continue
        if st.startswith('```'):
            j = i + 1
            while j < n and not lines[j].strip().startswith('```'):
                j += 1
            blocks.append(('code', lines[i + 1:j]))
            i = j + 1
            continue
        h = re.match(r'(#{1,2}) (.*)', ln)
        if h:
            blocks.append(('h1' if len(h.group(1)) == 1 else 'h2', h.group(2).strip()))
            i += 1
            continue
        if TERM_RX.match(st) and i + 1 < n and indent_of(lines[i + 1]) >= 2 and lines[i + 1].strip():
            j = i + 1
            while j < n and lines[j].strip() and indent_of(lines[j]) >= 2:
                j += 1
            blocks.append(('def', st, [x.strip() for x in lines[i + 1:j]]))
            i = j
            continue
        if st.startswith('- '):
            j = i + 1
            while j < n and lines[j].strip() and not lines[j].strip().startswith('- ') and \
                    indent_of(lines[j]) >= 2:
                j += 1
            blocks.append(('bullet', [st[2:]] + [x.strip() for x in lines[i + 1:j]]))
            i = j
            continue
        j = i
        while j < n and lines[j].strip() and not lines[j].strip().startswith(('```', '- ', '#')) \
                and not (j > i and TERM_RX.match(lines[j].strip())):
            j += 1
        blocks.append(('p', [x.strip() for x in lines[i:j]]))
        i = j
    return blocks


class ToolPage:
    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)[:-len('.1.md')]
        with open(path, encoding='utf-8') as f:
            self.text = f.read()
        self.blocks = md_blocks(self.text)

    def roff(self):
        out = th(self.name, 1, 'docs/man/' + os.path.basename(self.path))
        section = None
        for b in self.blocks:
            if section is None and b[:2] != ('h1', 'NAME'):
                continue        # the docs page's own title and note
            if b[0] == 'h1':
                section = b[1]
                out.append('.SH ' + esc(b[1].upper()))
            elif b[0] == 'h2':
                out.append('.SS ' + esc(b[1]))
            elif b[0] == 'p':
                if section == 'NAME':
                    out.append(md_inline(' '.join(b[1])).replace(' - ', ' \\- ', 1))
                else:
                    out += ['.PP', md_inline(' '.join(b[1]))]
            elif b[0] == 'code':
                base = min([indent_of(x) for x in b[1] if x.strip()] or [0])
                out += ['.PP', '.RS 4', '.nf'] + [esc(x[base:].rstrip(), code=True) for x in b[1]]
                out += ['.fi', '.RE']
            elif b[0] == 'bullet':
                out += ['.IP \\(bu 2', md_inline(' '.join(b[1]))]
            else:
                out += ['.TP', md_term(b[1]), md_inline(' '.join(b[2]))]
        return out

    def sections(self):
        """{(h1, h2 or None): [the options its definitions' terms name]}."""
        out, h1, h2 = {}, None, None
        for b in self.blocks:
            if b[0] == 'h1':
                h1, h2 = b[1], None
            elif b[0] == 'h2':
                h2 = b[1]
            elif b[0] == 'def':
                opts = []
                for code in re.findall(r'`([^`]+)`', b[1]):
                    opts += OPT_RX.findall(code)
                out.setdefault((h1, h2), []).extend(opts)
        return out


# ---- The pages ------------------------------------------------------------------

def load(inputs):
    headers, tools = [], []
    for p in inputs:
        if p.endswith(('.h', '.hpp')):
            headers.append(Header(p))
        elif p.endswith('.1.md'):
            tools.append(ToolPage(p))
        else:
            setup_error(f'{p}: neither a header (.h, .hpp) nor a NAME.1.md page')
    return headers, tools


def pages(headers, tools):
    """{file name: its lines}, and {function: its family page}."""
    out, where = {}, {}
    tool_names = [t.name for t in tools]
    for h in headers:
        name = h.base if h.base.endswith('.hpp') else h.stem
        out[f'{name}.3'] = overview_page(h, headers, tool_names)
        for f in h.families:
            if f'{f.page}.3' in out:
                setup_error(f'{h.path}: two families are called {f.page}')
            out[f'{f.page}.3'] = family_page(h, f)
    for h in headers:
        for f in h.families:
            for fn in f.functions():
                where[fn] = f.page
                if fn == f.page:
                    continue
                if f'{fn}.3' in out and out[f'{fn}.3'] != [f'.so man3/{f.page}.3']:
                    setup_error(f'{fn}: a page of that name exists already')
                out[f'{fn}.3'] = [f'.so man3/{f.page}.3']
    for t in tools:
        out[f'{t.name}.1'] = t.roff()
    return out, where


# ---- --check ----------------------------------------------------------------------

FAILURES = []
OPT_RX = re.compile(r'(?<![\w-])(--[a-z][a-z0-9-]*[a-z0-9]|-[A-Za-z])(?![\w-])')


def fail(kind, where, what):
    FAILURES.append(kind)
    print(f'{where}: {kind}: {what}')


def declared_functions(h):
    """The public functions the header declares, found apart from the
    parser: a line starting with a type and then name( at its first
    column, in the code only (comments blanked), not a typedef."""
    masked, _ = mask(h.text)
    names = set()
    for ln in masked.split('\n'):
        if not ln or ln[0] in ' \t#' or ln.startswith('typedef'):
            continue
        m = re.match(r'(?:static\s+inline\s+)?[A-Za-z_][\w\s*]*?\b(' + IDENT + r')\s*\(', ln)
        if m and m.group(1).startswith(PREFIXES) and not m.group(1).endswith('_'):
            names.add(m.group(1))
    return names


def exported(nm, lib):
    try:
        out = subprocess.run([nm, '-D', '--defined-only', lib], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        setup_error(f'{nm} -D {lib}: {e}')
    return {f[2].split('@')[0] for f in (ln.split() for ln in out.splitlines())
            if len(f) == 3 and f[1] in ('T', 'W', 'i')}


def help_text(cmd):
    try:
        r = subprocess.run(cmd + ['--help'], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        setup_error(f'{" ".join(cmd)} --help: {e}')
    if r.returncode != 0:
        setup_error(f'{" ".join(cmd)} --help exited {r.returncode}: {r.stderr.strip()}')
    return r.stdout


def check_functions(headers, where, build, nm, symbol_files):
    want = {}
    for h in headers:
        if h.base.endswith('.h'):
            for fn in declared_functions(h):
                want.setdefault(fn, h.include)
    if build and nm:
        for lib in ('fwait', 'bufpool'):
            path = os.path.join(build, lib, f'lib{lib}.so')
            if os.path.exists(path):
                for s in exported(nm, path):
                    want.setdefault(s, path)
    for f in symbol_files:
        with open(f) as fh:
            for s in fh.read().split():
                want.setdefault(s, f)
    if not want:
        setup_error('no function found in the headers')
    for fn, src in sorted(want.items()):
        if fn not in where:
            fail('function', src, f'{fn} has no manual page (not declared in a section of a '
                 'header that gen_man.py reads)')


def check_tool(page, program):
    top = help_text([program])
    secs = page.sections()
    documented = [o for (h1, h2), opts in secs.items() if h1 != 'COMMANDS' for o in opts]
    for o in sorted(set(OPT_RX.findall(top))):
        if o not in documented:
            fail('option', page.path, f'{o}: `{page.name} --help` prints it, no definition '
                 'outside COMMANDS names it')
    subs = re.findall(r'^  ([a-z][a-z0-9-]*) +\S', top, re.M)
    headings = {h2 for (h1, h2) in secs if h1 == 'COMMANDS' and h2}
    for sub in subs:
        if sub not in headings:
            fail('option', page.path, f'subcommand {sub}: no "## {sub}" under COMMANDS')
            continue
        documented = secs.get(('COMMANDS', sub), [])
        for o in sorted(set(OPT_RX.findall(help_text([program, sub])))):
            if o not in documented:
                fail('option', page.path, f'{o}: `{page.name} {sub} --help` prints it, no '
                     f'definition under "## {sub}" names it')


def lint(groff, paths):
    if not paths:
        setup_error('no pages to lint')
    names = {os.path.basename(p) for p in paths}
    for p in paths:
        with open(p, encoding='utf-8') as f:
            text = f.read()
        so = re.match(r'\.so man\d/(\S+)\n?$', text)
        if so:
            if so.group(1) not in names:
                fail('link', p, f'links to {so.group(1)}, which is no page')
            continue
        r = subprocess.run([groff, '-man', '-Tutf8', '-ww', '-z', p], capture_output=True,
                           text=True, env=dict(os.environ, LC_ALL='C.UTF-8'))
        if r.returncode != 0 or r.stderr.strip():
            fail('roff', p, f'{groff} -man -ww: {r.stderr.strip() or "exit " + str(r.returncode)}')


# ---- main --------------------------------------------------------------------------

VERSION = ''


def main(argv):
    global VERSION
    opts = {'tool': [], 'symbols': []}
    inputs, mode, it = [], None, iter(argv)
    for a in it:
        if a in ('--list', '--check'):
            mode = a[2:]
        elif a == '--lint':
            mode, opts['groff'] = 'lint', next(it)
        elif a in ('--outdir', '--version', '--build-root', '--nm', '--expect'):
            opts[a[2:]] = next(it)
        elif a in ('--tool', '--symbols'):
            opts[a[2:]].append(next(it))
        elif a.startswith('--'):
            setup_error(f'unknown option {a}')
        else:
            inputs.append(a)
    if 'outdir' in opts and mode is None:
        mode = 'write'
    if mode is None:
        setup_error(__doc__.split('\n\n')[1])
    if mode == 'lint':
        lint(opts['groff'], inputs)
    else:
        VERSION = opts.get('version', '')
        headers, tools = load(inputs)
        out, where = pages(headers, tools)
        if mode == 'list':
            print('\n'.join(sorted(out)))
            return 0
        if mode == 'write':
            os.makedirs(opts['outdir'], exist_ok=True)
            for name, lines in out.items():
                path = os.path.join(opts['outdir'], name)
                text = '\n'.join(lines) + '\n'
                try:
                    with open(path, encoding='utf-8') as f:
                        if f.read() == text:
                            continue
                except OSError:
                    pass
                with open(path, 'w', encoding='utf-8') as f:
                    f.write(text)
            return 0
        check_functions(headers, where, opts.get('build-root'), opts.get('nm'), opts['symbols'])
        by_name = {t.name: t for t in tools}
        for spec in opts['tool']:
            name, _, program = spec.partition('=')
            if name not in by_name:
                setup_error(f'--tool {name}: no {name}.1.md among the inputs')
            check_tool(by_name[name], program)
    expect = opts.get('expect')
    if expect:
        if expect not in FAILURES:
            print(f'gen_man: the planted {expect} drift went unnoticed')
            return 99
        print(f'gen_man: the planted {expect} drift was found, as it must be')
        return 1
    if FAILURES:
        print(f'gen_man: {len(FAILURES)} failure(s)')
        return 1
    print(f'gen_man: ok ({mode})')
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main(sys.argv[1:]))
    except SystemExit:
        raise
    except Exception as e:  # a bug here must not pass a should_fail test
        print(f'gen_man: setup error: {e!r}')
        sys.exit(99)
