#!/usr/bin/env python3
"""check-layout.py - the layout of runner/ holds (tests/t0016-layout.sh).

  check-layout.py includes TOP   the folders' include graph has no cycle;
                                 no folder includes a header of runner/'s
                                 top (the commands); base/'s modules
                                 include each other in one direction;
                                 every header name is found in one place
  check-layout.py readmes TOP    every folder of runner/ has a README.md
                                 saying what it owns and must never do,
                                 runner/README.md names every folder in
                                 the order they include each other, and
                                 every one of them is distributed
  check-layout.py graph TOP      print the folder graph (who includes whom)

The graph is built from the `#include "..."` lines of runner/ and
allowlist/, resolved as the compiler does: first the including file's own
folder, then the -I folders of AM_CPPFLAGS (Makefile.am and the fragments
it includes, in order). A node is a folder of runner/ ("runner" is its
top) or allowlist. Exit 1 naming each problem, with the includes that
make it.
"""
import os
import re
import sys

BASE = "runner/base"
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def makefile_lines(top, rel, seen):
    """The logical lines of a Makefile fragment, its includes expanded."""
    if rel in seen:
        return []
    seen.add(rel)
    with open(os.path.join(top, rel), encoding="utf-8") as f:
        text = f.read().replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        m = re.match(r"include\s+(\S+)", line)
        if m:
            out += makefile_lines(top, m.group(1), seen)
        else:
            out.append(line)
    return out


def include_dirs(top):
    dirs = []
    for line in makefile_lines(top, "Makefile.am", set()):
        if re.match(r"\s*AM_CPPFLAGS\s*\+?=", line):
            for d in re.findall(r"-I\$\(top_srcdir\)/(\S+)", line):
                if d not in dirs:
                    dirs.append(d.rstrip("/"))
    return dirs


def sources(top):
    out = []
    for root in ("runner", "allowlist"):
        for d, _, files in os.walk(os.path.join(top, root)):
            for f in files:
                if f.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(d, f), top))
    return sorted(out)


def node(path):
    parts = path.split("/")
    if parts[0] == "runner":
        return "runner" if len(parts) == 2 else "runner/" + parts[1]
    return parts[0]


def resolve(top, incdirs, src, name):
    """Where the compiler finds `#include "name"` of src, relative to top."""
    own = os.path.normpath(os.path.join(os.path.dirname(src), name))
    if os.path.isfile(os.path.join(top, own)):
        return own
    for d in incdirs:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(top, p)):
            return p
    return None


def includes(top):
    """[(src, name, target)] for every quoted include of runner/ and
    allowlist/; problems for those found nowhere or in two -I folders."""
    incdirs = include_dirs(top)
    edges, problems = [], []
    for src in sources(top):
        with open(os.path.join(top, src), encoding="utf-8") as f:
            text = f.read()
        for name in INCLUDE_RE.findall(text):
            if name == "config.h":	# made by configure
                continue
            target = resolve(top, incdirs, src, name)
            if target is None:
                problems.append(f'{src}: "{name}" is in no folder of the '
                                f'include path ({", ".join(incdirs)})')
                continue
            where = [d for d in incdirs
                     if os.path.isfile(os.path.join(top, d, name))]
            if len(where) > 1 and os.path.dirname(target) != \
                    os.path.dirname(src):
                problems.append(f'{src}: "{name}" is in {" and ".join(where)}'
                                ": which one it gets depends on their order")
            edges.append((src, name, target))
    return edges, problems


def cycles(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def shortest_cycle(graph, start, members):
    """The shortest cycle from start back to it inside members, or None."""
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, ())):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    return None


def report_cycles(graph, witness, what):
    """One problem per distinct shortest cycle through each node of each
    component, with the includes that make each of its edges."""
    problems, seen = [], set()
    for comp in cycles(graph):
        for start in comp:
            path = shortest_cycle(graph, start, set(comp))
            key = frozenset(zip(path, path[1:]))
            if key in seen:
                continue
            seen.add(key)
            lines = [f"{what} include each other: {' -> '.join(path)}"]
            for a, b in zip(path, path[1:]):
                for src, name in witness[(a, b)][:3]:
                    lines.append(f'  {a} -> {b}: {src} includes "{name}"')
            problems.append("\n".join(lines))
    return problems


def check_includes(top):
    edges, problems = includes(top)
    graph, witness = {}, {}
    mgraph, mwitness = {}, {}
    for src, name, target in edges:
        a, b = node(src), node(target)
        if a != b:
            graph.setdefault(a, set()).add(b)
            witness.setdefault((a, b), []).append((src, name))
            if b == "runner":
                problems.append(f'{src}: includes "{name}" of runner/\'s '
                                "top: only commands include the commands' "
                                "headers")
        if a == b == BASE:
            ma = os.path.splitext(src)[0]
            mb = os.path.splitext(target)[0]
            if ma != mb:
                mgraph.setdefault(ma, set()).add(mb)
                mwitness.setdefault((ma, mb), []).append((src, name))
    problems += report_cycles(graph, witness, "folders")
    problems += report_cycles(mgraph, mwitness, f"modules of {BASE}/")
    return problems


def folders(top):
    runner = os.path.join(top, "runner")
    return sorted(d for d in os.listdir(runner)
                  if os.path.isdir(os.path.join(runner, d)))


def distributed(top):
    """Every word of EXTRA_DIST in Makefile.am and its fragments."""
    words = set()
    for line in makefile_lines(top, "Makefile.am", set()):
        m = re.match(r"\s*EXTRA_DIST\s*\+?=(.*)", line)
        if m:
            words.update(m.group(1).split())
    return words


def check_order(top, top_text):
    """runner/README.md lists the folders in the order they build on each
    other: a folder includes only folders listed above it."""
    order = re.findall(r"^\|\s*`([a-z]+)/`", top_text, re.M)
    problems = []
    edges, _ = includes(top)
    seen = set()
    for src, name, target in edges:
        a, b = node(src), node(target)
        if not (a.startswith("runner/") and b.startswith("runner/")) \
                or a == b:
            continue
        fa, fb = a[len("runner/"):], b[len("runner/"):]
        if fa not in order or fb not in order:
            continue	# a missing row is named below
        if order.index(fb) > order.index(fa) and (fa, fb) not in seen:
            seen.add((fa, fb))
            problems.append(f"runner/README.md: {fa}/ includes {fb}/ "
                            f"({src} includes \"{name}\"), listed below it")
    return problems


def check_readmes(top):
    problems = []
    dist = distributed(top)
    top_readme = os.path.join(top, "runner", "README.md")
    try:
        with open(top_readme, encoding="utf-8") as f:
            top_text = f.read()
    except OSError:
        return ["runner/README.md: missing (the map of runner/'s folders)"]
    if "runner/README.md" not in dist:
        problems.append("runner/README.md: not in EXTRA_DIST")
    problems += check_order(top, top_text)
    for d in folders(top):
        rel = f"runner/{d}/README.md"
        try:
            with open(os.path.join(top, rel), encoding="utf-8") as f:
                text = f.read()
        except OSError:
            problems.append(f"{rel}: missing (what {d}/ owns and must never "
                            "do)")
            continue
        for part in ("Owns:", "Never:"):
            if part not in text:
                problems.append(f"{rel}: no '{part}' part")
        if d not in re.findall(r"^\|\s*`([a-z]+)/`", top_text, re.M):
            problems.append(f"runner/README.md: no row of {d}/ in its "
                            "table")
        if rel not in dist:
            problems.append(f"{rel}: not in EXTRA_DIST")
    return problems


def print_graph(top):
    edges, problems = includes(top)
    graph = {}
    for src, _, target in edges:
        a, b = node(src), node(target)
        if a != b:
            graph.setdefault(a, set()).add(b)
    for a in sorted(graph):
        print(f"{a} -> {' '.join(sorted(graph[a]))}")
    return problems


def main(argv):
    if len(argv) != 3 or argv[1] not in ("includes", "readmes", "graph"):
        print("usage:\n" + __doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    top = argv[2]
    problems = {"includes": check_includes, "readmes": check_readmes,
                "graph": print_graph}[argv[1]](top)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
