#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lint-layers.sh [TOP]: the SCIF core keeps the layers of design.rst,
# and scif_rdma (drivers/infiniband/hw/scif) those of rdma.rst.
#
# For each, reads the layer table of its document (the lines
# "layer N NAME: FILE.c ..." of its "Layer table" literal block, layer 1
# on top) and the known, open exceptions listed in the same block (lines
# "exception FILE.c FUNC"; reported, not failed), then scans the
# sources:
#
# - each core .c file (drivers/misc/scif/*.c but the test files,
#   *_kunit.c and *testhooks.c) must be in the table;
# - a core file may reference the functions defined (non-static) by the
#   core files of its own layer or of a lower one, never of a higher one;
# - a bus (drivers/misc/scif/bus/*.c but its test files) may reference
#   no core function but those scif_hw.h declares;
# - a core header named after a core file (scif_conn.h for scif_conn.c)
#   takes that file's layer, and may include no header that takes a
#   higher one (headers of no file, such as scif_info.h, are free).
#
# scif_rdma is checked the same way: its .c files against the table of
# Documentation/scif/rdma.rst; it has no bus and no test file.
#
# Why sources and not nm on the objects: make lint runs without a build,
# and a scan sees every configuration at once (the #ifdef'd code too).
# Comments, strings and character literals are blanked first; a function
# definition is a line that starts in column 0 with its type (not
# "static"; a label, which has a colon, is none) and whose parameter
# list closes before a "{"; kernel style keeps both.  A reference is any use of the name as a word (calls,
# function pointers in ops tables, work functions).
#
# Prints FILE: calls FUNC of HIGHER_FILE (layer X above layer Y) for each
# upward reference, and exits 1 if there is one, if a core file is not in
# the table (or the table names a file that is not one), or if an
# exception no longer happens.  Prints the cycles
# among the core's files it finds (exceptions included) and fails on one.
set -eu

cd "${1:-$(dirname "$0")/..}"
exec python3 - <<'PYTHON'
import glob
import os
import re
import sys

# (folder of the .c files, document with the layer table, has buses)
PARTS = [('drivers/misc/scif', 'Documentation/scif/design.rst', True),
         ('drivers/infiniband/hw/scif', 'Documentation/scif/rdma.rst',
          False)]
CORE = DOC = None


def is_test(path):
    return re.search(r'(_kunit|testhooks)\.c$', path) is not None


def blank(src):
    """Comments, strings and char literals out, line numbers kept."""
    def keep_lines(m):
        return '\n' * m.group(0).count('\n')
    src = re.sub(r'/\*.*?\*/', keep_lines, src, flags=re.S)
    src = re.sub(r'//[^\n]*', '', src)
    src = re.sub(r'"(\\.|[^"\\\n])*"', '""', src)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", src)


DEF = re.compile(r'^([A-Za-z_][^;{}()#=:]*?)\b([A-Za-z_]\w*)\s*\([^;{}]*?\)'
                 r'\s*\{', re.M)


def definitions(src):
    """(non-static, static) function names defined in src."""
    public, private = set(), set()
    for m in DEF.finditer(src):
        words = m.group(1).split()
        (private if 'static' in words else public).add(m.group(2))
    return public, private


def read_table():
    layers, exceptions, seen = {}, set(), False
    for line in open(DOC):
        if line.strip() == 'Layer table':
            seen = True
        if not seen:
            continue
        if layers and line.strip() and not line[0].isspace():
            break           # the end of the table's literal block
        m = re.match(r'\s+layer (\d+) [^:]*:(.*)$', line)
        if m:
            for name in m.group(2).split():
                layers[name] = int(m.group(1))
        m = re.match(r'\s+exception (\S+\.c) (\w+)\s*$', line)
        if m:
            exceptions.add((m.group(1), m.group(2)))
    if not layers:
        sys.exit(DOC + ': no layer table (a "Layer table" section with '
                 '"layer N NAME: FILE.c ..." lines)')
    return layers, exceptions


def main():
    global CORE, DOC
    rc = 0
    for CORE, DOC, has_buses in PARTS:
        rc |= check(has_buses)
    return rc


def check(has_buses):
    layers, exceptions = read_table()
    core = sorted(f for f in glob.glob(CORE + '/*.c') if not is_test(f))
    buses = sorted(f for f in glob.glob(CORE + '/bus/*.c')
                   if has_buses and not is_test(f))
    text, owner, private = {}, {}, {}
    for f in core + buses:
        text[f] = blank(open(f).read())
        public, private[f] = definitions(text[f])
        if f in core:
            for name in public:
                owner.setdefault(name, f)
    hw = set()
    if has_buses:
        hw = set(re.findall(r'\b(\w+)\s*\(',
                            blank(open(CORE + '/scif_hw.h').read())))
    bad, used, edges = [], set(), {}
    for f in core:
        if os.path.basename(f) not in layers:
            bad.append('%s: not in the layer table of %s' % (f, DOC))
    names = set(os.path.basename(f) for f in core)
    for name in sorted(set(layers) - names):
        bad.append('%s: the layer table names %s, not a core file'
                   % (DOC, name))
    for f in core + buses:
        me = os.path.basename(f)
        for name in sorted(set(re.findall(r'\b[A-Za-z_]\w*\b', text[f]))):
            d = owner.get(name)
            if not d or d == f or name in private[f]:
                continue
            them = os.path.basename(d)
            if f in buses:
                if name not in hw:
                    bad.append('%s: calls %s of %s (not in scif_hw.h)'
                               % (f, name, d))
                continue
            edges.setdefault(me, set()).add(them)
            if me not in layers or them not in layers:
                continue
            if layers[them] >= layers[me]:
                continue
            if (me, name) in exceptions:
                used.add((me, name))
                print('%s: calls %s of %s (layer %d above layer %d): '
                      'known exception' % (f, name, d, layers[them],
                                           layers[me]))
                continue
            bad.append('%s: calls %s of %s (layer %d above layer %d)'
                       % (f, name, d, layers[them], layers[me]))
    for me, name in sorted(exceptions - used):
        bad.append('%s: exception %s %s no longer happens: drop it'
                   % (DOC, me, name))
    bad += header_includes(layers)
    bad += cycles(edges)
    for line in bad:
        print(line)
    return 1 if bad else 0


def header_includes(layers):
    """A part's header includes no header of a higher part."""
    def layer(header):
        return layers.get(os.path.basename(header)[:-2] + '.c')

    bad = []
    for h in sorted(glob.glob(CORE + '/*.h')):
        mine = layer(h)
        if mine is None:
            continue
        for inc in re.findall(r'^#include "([\w.]+\.h)"', open(h).read(),
                              re.M):
            theirs = layer(inc)
            if theirs is not None and theirs < mine:
                bad.append('%s: includes %s (layer %d above layer %d)'
                           % (h, inc, theirs, mine))
    return bad


def cycles(edges):
    """One line per strongly connected set of files (Tarjan)."""
    index, low, stack, out, n = {}, {}, [], [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append('cycle among %s' % ' '.join(sorted(part)))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


sys.exit(main())
PYTHON
