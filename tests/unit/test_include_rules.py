#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The include rules of docs/architecture.md ("Layers and includes"), checked on
the tree: which headers the files of each layer may include, and no include
cycle between modules (foo.c + foo.h). Prints each violation as FILE:LINE and
exits 1 when there is any.

Usage: test_include_rules.py SOURCE_DIR

Before the tree, the rules run on a small made-up tree with known faults and
must find each of them, so that a checker that finds nothing fails too."""

import os
import re
import sys

LAYER_DIRS = ('bpf', 'daemon', 'lib')
SOURCE_SUFFIXES = ('.c', '.h')
# What a daemon/collectors/ file may take from daemon/ itself (the collector
# interface); the rest of the daemon reaches a collector through them.
COLLECTOR_DAEMON_HEADERS = ('daemon/collector.h', 'daemon/bpf_attach.h')

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def generated_path(name):
    """Where the build writes a generated header, or None: skeletons and
    vmlinux.h in bpf/, protoc-c's output in lib/."""
    if name.endswith('.skel.h') or name == 'vmlinux.h':
        return 'bpf/' + name
    if name.endswith('.pb-c.h'):
        return 'lib/' + name
    return None


def layer(path):
    if path.startswith('daemon/collectors/'):
        return 'collectors'
    if path.startswith('daemon/top/'):
        return 'top'
    return path.split('/', 1)[0]


def is_skeleton(path):
    return path.endswith('.skel.h')


def is_bpf_abi_header(path):
    """bpf/*.h that user space shares with the BPF programs: not *.bpf.h,
    not the kernel's types (vmlinux.h), not a skeleton."""
    return (layer(path) == 'bpf' and not path.endswith('.bpf.h') and not is_skeleton(path)
            and path != 'bpf/vmlinux.h')


def rule_broken(src, target):
    """Why src may not include target (both tree paths), or None."""
    src_layer, target_layer = layer(src), layer(target)
    if src_layer == 'lib':
        if target_layer == 'lib' or is_bpf_abi_header(target):
            return None
        return 'lib/ includes only lib/ headers and bpf/ shared ABI headers (bpf/*.h, not *.bpf.h)'
    if src_layer == 'bpf':
        if target_layer == 'bpf' and not is_skeleton(target):
            return None
        return 'bpf/ includes only bpf/ headers'
    if src_layer == 'top':
        if target_layer in ('lib', 'top'):
            return None
        return 'daemon/top/ (memwatch-top) includes only lib/ headers and its own'
    if src_layer == 'collectors':
        if target_layer in ('lib', 'bpf', 'collectors') or target in COLLECTOR_DAEMON_HEADERS:
            return None
        return ('daemon/collectors/ includes lib/, bpf/ (skeletons too) and daemon/collectors/ headers, '
                'and of daemon/ only ' + ' and '.join(h.split('/')[-1] for h in COLLECTOR_DAEMON_HEADERS))
    if src_layer == 'daemon':
        if target_layer != 'top':
            return None
        return 'the daemon does not include memwatch-top\'s headers (daemon/top/ is a separate program)'
    return None


# Comments, and the string and character literals a comment marker may stand in.
COMMENT_OR_LITERAL_RE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def strip_comments(text):
    """The text with every comment blanked out, newlines kept (line numbers stay)."""
    def blank(m):
        s = m.group(0)
        return s if s[0] in '"\'' else re.sub(r'[^\n]', ' ', s)
    return COMMENT_OR_LITERAL_RE.sub(blank, text)


def resolve(src, quote, name, paths, by_basename):
    """(tree path, None) for an include, (None, None) for a system header,
    (None, problem) when a quoted name is not a header of the tree."""
    if quote == '"':
        local = os.path.normpath(os.path.join(os.path.dirname(src), name))
        if local in paths:
            return local, None
    base = os.path.basename(name)
    if quote == '<' and '/' in name:
        return None, None  # <bpf/libbpf.h>, <sys/types.h>: not ours
    found = by_basename.get(base, [])
    if len(found) == 1 and '/' not in name:
        return found[0], None
    if len(found) > 1:
        return None, '"%s" names more than one header of the tree (%s): which one depends on -I order' % (
            name, ', '.join(sorted(found)))
    generated = generated_path(base)
    if generated and '/' not in name:
        return generated, None
    if quote == '"':
        return None, '"%s" is no header of the tree: a system header takes <>, a generated one a rule here' % name
    return None, None


def includes(files):
    """Every project include: (src, line number, target path or None, problem or None)."""
    paths = set(files)
    by_basename = {}
    for p in paths:
        if p.endswith('.h'):
            by_basename.setdefault(os.path.basename(p), []).append(p)
    for src in sorted(files):
        for lineno, line in enumerate(strip_comments(files[src]).split('\n'), 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            target, problem = resolve(src, m.group(1), m.group(2), paths, by_basename)
            if target or problem:
                yield src, lineno, target, problem


def modules(found):
    """Each file's module: foo.c and foo.h are one, foo. A private header,
    foo_internal.h, shared by a few .c files of one module, is part of the
    module whose public header (foo.h or foo_*.h) it includes: the .c files
    that include both make no cycle."""
    def plain(path):
        return os.path.splitext(path)[0]
    result = {}
    for src, _, target, _ in found:
        result.setdefault(src, plain(src))
        if target:
            result.setdefault(target, plain(target))
    for src, _, target, _ in found:
        prefix = plain(src)[:-len('_internal')]
        if (src.endswith('_internal.h') and target and target.endswith('.h') and target != src
                and plain(target).startswith(prefix) and result[src] == plain(src)):
            result[src] = plain(target)
    return result


def cycles(edges):
    """The strongly connected components of more than one module (Tarjan),
    each as one cycle through it: a list of modules, the first repeated last."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, on_stack, stack, sccs = {}, {}, set(), [], []
    counter = [0]

    def strongconnect(v):
        # Iterative, so that a long chain cannot reach Python's recursion limit.
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            advanced = False
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                scc = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    scc.append(w)
                    if w == node:
                        break
                if len(scc) > 1:
                    sccs.append(sorted(scc))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)

    result = []
    for scc in sccs:
        members, start = set(scc), scc[0]
        # Shortest way from start back to start inside the component.
        prev, queue, found = {}, [start], None
        while queue and found is None:
            nxt = []
            for node in queue:
                for w in sorted(graph[node]):
                    if w not in members:
                        continue
                    if w == start:
                        found = node
                        break
                    if w not in prev:
                        prev[w] = node
                        nxt.append(w)
                if found is not None:
                    break
            queue = nxt
        path = [start]
        node = found
        while node != start:
            path.append(node)
            node = prev[node]
        path.append(start)
        path.reverse()
        result.append(path)
    return result


def check(files):
    """Violations in files ({tree path: text}), as printable lines."""
    found = list(includes(files))
    module = modules(found)
    problems = []
    edges = {}
    for src, lineno, target, problem in found:
        where = '%s:%d' % (src, lineno)
        if problem:
            problems.append('%s: %s' % (where, problem))
            continue
        why = rule_broken(src, target)
        if why:
            problems.append('%s: includes %s: %s' % (where, target, why))
        if target in files and module[src] != module[target]:
            edges.setdefault((module[src], module[target]), where)
    for cycle in cycles(edges):
        steps = ', '.join('%s -> %s at %s' % (a, b, edges[(a, b)]) for a, b in zip(cycle, cycle[1:]))
        problems.append('%s: include cycle %s (%s)' % (edges[(cycle[0], cycle[1])], ' -> '.join(cycle), steps))
    return problems


def read_tree(source_dir):
    files = {}
    for top in LAYER_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(source_dir, top)):
            dirnames.sort()
            for f in filenames:
                if f.endswith(SOURCE_SUFFIXES):
                    full = os.path.join(dirpath, f)
                    with open(full, encoding='utf-8', errors='replace') as fh:
                        files[os.path.relpath(full, source_dir)] = fh.read()
    return files


# A made-up tree with one fault of each kind; the checker must find each.
SELF_TEST_TREE = {
    'lib/a.c': '#include "a.h"\n#include "core.h"\n#include "events.bpf.h"\n#include "events.h"\n',
    'lib/a.h': '#include <stdint.h>\n/* #include "core.h" in a comment is no include */\n',
    'lib/b.c': '#include "b.h"\n',
    'lib/b.h': '#include "c.h"\n',
    'lib/c.h': '#include "b.h"\n',
    'lib/d.c': '#include "d.h"\n#include "d_internal.h"\n',
    'lib/d.h': '',
    'lib/d_internal.h': '#include "strbuf.h"\n#include "d.h"\n',
    'lib/e_write.c': '#include "e_write.h"\n#include "e_internal.h"\n',
    'lib/e_read.c': '#include "e_write.h"\n#include "e_internal.h"\n',
    'lib/e_write.h': '',
    'lib/e_internal.h': '#include "e_write.h"\n',
    'bpf/events.h': '',
    'bpf/events.bpf.h': '#include "events.h"\n#include "strbuf.h"\n',
    'bpf/x.bpf.c': '#include "vmlinux.h"\n#include "events.bpf.h"\n',
    'lib/strbuf.h': '',
    'daemon/core.h': '',
    'daemon/log.h': '',
    'daemon/collector.h': '',
    'daemon/collectors/x.c': ('#include "collector.h"\n#include "x.skel.h"\n#include "events.h"\n'
                              '#include "log.h"\n#include "strbuf.h"\n'),
    'daemon/top/view.h': '',
    'daemon/top/main.c': '#include "view.h"\n#include "strbuf.h"\n#include "core.h"\n',
    'daemon/main.c': '#include "core.h"\n#include "view.h"\n#include "nowhere.h"\n',
}
SELF_TEST_EXPECTED = [
    'lib/a.c:2: includes daemon/core.h',
    'lib/a.c:3: includes bpf/events.bpf.h',
    'bpf/events.bpf.h:2: includes lib/strbuf.h',
    'daemon/collectors/x.c:4: includes daemon/log.h',
    'daemon/top/main.c:3: includes daemon/core.h',
    'daemon/main.c:2: includes daemon/top/view.h',
    'daemon/main.c:3: "nowhere.h" is no header',
    'include cycle lib/b -> lib/c -> lib/b',
]


def self_test():
    found = check(SELF_TEST_TREE)
    missing = [e for e in SELF_TEST_EXPECTED if not any(e in line for line in found)]
    extra = [line for line in found if not any(e in line for e in SELF_TEST_EXPECTED)]
    for e in missing:
        print('self-test: the checker missed a planted fault: %s' % e)
    for line in extra:
        print('self-test: the checker reported a fault not planted: %s' % line)
    return not missing and not extra


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    if not self_test():
        return 1
    files = read_tree(sys.argv[1])
    if not any(p.startswith('lib/') for p in files) or not any(p.startswith('daemon/') for p in files):
        print('no lib/ or daemon/ sources under %s' % sys.argv[1])
        return 1
    problems = check(files)
    for line in problems:
        print(line)
    n_includes = sum(1 for _ in includes(files))
    print('%d files, %d includes of the tree checked: %d violations' % (len(files), n_includes, len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
