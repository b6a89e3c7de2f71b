#!/usr/bin/env python3
"""check-docs.py - what README.md and doc/ promise against warden itself
and its manual (doc/warden.1.md, the overview, and doc/warden-CMD.1.md, a
page per command). Used by tests/t0015-docs.sh; one check per sub-command,
printing every mismatch and exiting 1 when there is any.

  check-docs.py commands  SRCDIR HELP-JSON
  check-docs.py exits     SRCDIR HELP-JSON HELP-TEXT
  check-docs.py refs      SRCDIR   (Markdown files, links, source paths)
  check-docs.py fields    SRCDIR
  check-docs.py keys      SRCDIR   (warden(1) names every field the tree's files use)
  check-docs.py help      HELP-JSON HELP-TEXT
  check-docs.py makefile  SRCDIR HELP-JSON
  check-docs.py readme    SRCDIR
  check-docs.py index     SRCDIR   (doc/README.md names every page)
  check-docs.py internal  SRCDIR   (no page names how warden is developed)
  check-docs.py paragraphs PAGE.txt...   (rendered man pages)
"""
import glob
import json
import os
import re
import sys

problems = []


def bad(msg):
    problems.append(msg)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def sections(md, level):
    """{heading: body} for the headings of one level ('## ', '### ')."""
    depth = len(level.strip())
    out, name, body = {}, None, []
    for line in md.splitlines():
        m = re.match(r"^(#+) (.*)$", line)
        if m and len(m.group(1)) <= depth:
            if name is not None:
                out[name] = "\n".join(body)
            name, body = (m.group(2).strip(), []) if len(m.group(1)) == depth else (None, [])
            continue
        if name is not None:
            body.append(line)
    if name is not None:
        out[name] = "\n".join(body)
    return out


def table_rows(body):
    """Rows of the first Markdown table in body, as lists of cells."""
    rows = []
    for line in body.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
            if all(re.fullmatch(r":?-+:?", c) for c in cells):
                continue
            rows.append(cells)
        elif rows:
            break
    return rows[1:] if rows else []


def plain(md):
    """Markdown inline text as a terminal shows it."""
    s = re.sub(r"\\([\\\[\]_|<>*`-])", lambda m: "\0%d\0" % ord(m.group(1)), md)
    s = re.sub(r"\*\*|\*|`", "", s)
    s = re.sub(r"(?<![A-Za-z0-9])_([A-Za-z]+)_(?![A-Za-z0-9])", r"\1", s)
    s = re.sub(r"\0(\d+)\0", lambda m: chr(int(m.group(1))), s)
    return re.sub(r"\s+", " ", s).strip()


def man_sections(src):
    """{SECTION: body} of a man page source ('# NAME', ...)."""
    return sections(src, "# ")


def synopsis_lines(body):
    return [plain(l) for l in body.splitlines() if l.strip()]


def command_pages(srcdir):
    d = os.path.join(srcdir, "doc")
    return {m.group(1): os.path.join(d, n) for n in sorted(os.listdir(d))
            for m in [re.match(r"^warden-(.+)\.1\.md$", n)] if m}


def readme_commands(srcdir):
    """README's command table: {name: (task, row)} from each row's
    `warden NAME ...` cells."""
    readme = read(os.path.join(srcdir, "README.md"))
    body = sections(readme, "### ").get("Commands", "")
    lines = [l for l in body.splitlines() if l.startswith("|")]
    head = [c.strip().lower() for c in lines[0].strip().strip("|").split("|")] if lines else []
    out = {}
    for row in table_rows(body):
        task = row[head.index("task")] if "task" in head else None
        for syn in re.findall(r"`warden ([^`]*)`", " ".join(row)):
            words = syn.replace("\\|", "|").split()
            if words and not words[0].startswith("-"):
                out.setdefault(words[0], (task, row, words))
    return out


# The sections of a command's page, in their order (OpenBSD's and git's);
# a page's own sections (SHIMS, STEPS, ...) sit between DESCRIPTION and
# OPTIONS.
MAN_ORDER = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS",
             "FILES", "ENVIRONMENT", "EXAMPLES", "SEE ALSO"]


def check_commands(srcdir, help_json):
    """Every command: a row of README's table (in the task group warden help
    gives it), a page doc/warden-NAME.1.md whose SYNOPSIS is its usage and
    whose NAME is its summary, and a line of warden(1)'s COMMANDS under its
    group; no page or row names a command warden lacks."""
    helpdoc = json.load(open(help_json))
    cmds = {c["name"]: c for c in helpdoc["commands"]}
    titles = {g["id"]: g["title"] for g in helpdoc.get("groups", [])}
    rows = readme_commands(srcdir)
    for name, (task, row, words) in rows.items():
        if name not in cmds:
            bad("README names 'warden %s', which is not in 'warden help'" % " ".join(words))
            continue
        sub = words[1] if len(words) > 1 else ""
        if not re.fullmatch(r"[a-z][a-z-]*(\|[a-z][a-z-]*)*", sub):
            sub = ""
        for w in (sub.split("|") if sub else []):
            if not any(u.split()[:1] == [w] for u in cmds[name]["usage"] if u):
                bad("README names 'warden %s %s', which 'warden help %s' lacks" % (name, w, name))
        group = cmds[name].get("group")
        if task is not None and plain(task).lower() != titles.get(group, "").lower():
            bad("README puts 'warden %s' under '%s'; warden help under '%s'" % (name, plain(task), titles.get(group)))
    for name in cmds:
        if name not in rows:
            bad("'warden %s' has no row in README's command table" % name)
    pages = command_pages(srcdir)
    for name, c in cmds.items():
        if name not in pages:
            bad("'warden %s' has no page doc/warden-%s.1.md" % (name, name))
            continue
        src = read(pages[name])
        secs = man_sections(src)
        for s in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES", "SEE ALSO"):
            if s not in secs:
                bad("warden-%s.1.md has no %s section" % (name, s))
        order = [s for s in secs if s in MAN_ORDER]
        if order != sorted(order, key=MAN_ORDER.index):
            bad("warden-%s.1.md's sections come as %s, not in the order %s" %
                (name, order, [s for s in MAN_ORDER if s in order]))
        want = [plain(("warden %s %s" % (name, u)).strip()) for u in c["usage"]]
        got = synopsis_lines(secs.get("SYNOPSIS", ""))
        if got != want:
            bad("warden-%s.1.md's SYNOPSIS is %s; its usage is %s" % (name, got, want))
        nm = plain(secs.get("NAME", ""))
        if nm != "warden-%s - %s" % (name, c["summary"]):
            bad("warden-%s.1.md's NAME is '%s', not 'warden-%s - %s'" % (name, nm, name, c["summary"]))
        if not re.search(r"^title: WARDEN-%s$" % re.escape(name.upper()), src, re.M):
            bad("warden-%s.1.md's title is not WARDEN-%s" % (name, name.upper()))
        ex = plain(secs.get("EXAMPLES", ""))
        for e in examples(c["help"]):
            if plain(e) not in ex:
                bad("warden-%s.1.md's EXAMPLES lack '%s' of 'warden help %s'" % (name, e, name))
    for name in pages:
        if name not in cmds and name != "simengine":
            bad("doc/warden-%s.1.md is the page of no command" % name)
    # warden(1): COMMANDS lists every page under its group.
    man = read(os.path.join(srcdir, "doc/warden.1.md"))
    body = man_sections(man).get("COMMANDS", "")
    group = None
    listed = {}
    for line in body.splitlines():
        m = re.match(r"^## (.*)$", line)
        if m:
            group = plain(m.group(1))
            continue
        for n in re.findall(r"\*\*warden-([a-z-]+)\*\*\(1\)", line):
            listed[n] = group
    for name, c in cmds.items():
        if listed.get(name) != titles.get(c.get("group")):
            bad("warden.1.md lists warden-%s(1) under '%s', not '%s'" % (name, listed.get(name), titles.get(c.get("group"))))


def check_makefile(srcdir, help_json):
    """Every page is built, installed and distributed."""
    mk = read(os.path.join(srcdir, "Makefile.am"))
    for c in json.load(open(help_json))["commands"]:
        page = "doc/warden-%s.1" % c["name"]
        if not re.search(r"^\s*%s\b" % re.escape(page), mk, re.M):
            bad("Makefile.am does not list %s in WARDEN_COMMAND_MANS" % page)
        if not re.search(r"^%s: %s\.md( doc/man-escape\.awk)?$" % (re.escape(page), re.escape(page)), mk, re.M):
            bad("Makefile.am has no rule making %s from %s.md" % (page, page))


def exit_rows(srcdir):
    readme = read(os.path.join(srcdir, "README.md"))
    man = read(os.path.join(srcdir, "doc/warden.1.md"))
    body = next((b for h, b in sections(readme, "### ").items() if h.startswith("Exit codes")), "")
    rd = {int(r[0]): r[1] for r in table_rows(body) if r[0].isdigit()}
    mbody = sections(man, "# ").get("EXIT STATUS", "")
    mm = {int(c): t for c, t in re.findall(r"^\*\*(\d)\*\*\n:\s+(.*(?:\n    .*)*)", mbody, re.M)}
    return rd, mm


def headline(text):
    return plain(text).split(":")[0].strip().rstrip(".").lower()


def check_exits(srcdir, help_json, help_text):
    rd, mm = exit_rows(srcdir)
    helpdoc = json.load(open(help_json))
    hj = {e["code"]: e["meaning"] for e in helpdoc["exit_codes"]}
    text = re.sub(r"\s+", " ", read(help_text))
    m = re.search(r"Exit status: (.*?)\.", text)
    ht = {}
    if m:
        for part in m.group(1).split(","):
            c, _, t = part.strip().partition(" ")
            ht[int(c)] = t
    want = {c: headline(t) for c, t in rd.items()}
    if sorted(want) != [0, 1, 2, 3, 4]:
        bad("README's exit-code table has codes %s" % sorted(want))
    for name, got in (("warden.1.md EXIT STATUS", {c: headline(t) for c, t in mm.items()}),
                      ("'warden help'", ht), ("'warden help --json'", hj)):
        if got != want:
            bad("%s says %s; README says %s" % (name, got, want))
    # The man page says as much as the README does for each code.
    for c, t in rd.items():
        rest = [w for w in re.findall(r"[a-z][a-z_-]{3,}", plain(t).lower())]
        mt = plain(mm.get(c, "")).lower()
        missing = [w for w in rest if w not in mt]
        if missing:
            bad("warden.1.md EXIT STATUS %d lacks what README says: %s" % (c, ", ".join(missing)))


def doc_files(srcdir, man=False):
    """README.md and the Markdown of doc/ (with man=True, the man page
    sources too), as (path relative to srcdir, text)."""
    out = [("README.md", read(os.path.join(srcdir, "README.md")))]
    d = os.path.join(srcdir, "doc")
    for name in sorted(os.listdir(d)):
        if name.endswith(".md") and (man or not re.search(r"\.\d\.md$", name)):
            out.append(("doc/" + name, read(os.path.join(d, name))))
    return out


def check_refs(srcdir):
    # written by warden (an agent run's task, a snapshot's report, the
    # cycle journal) and by ci/real-llama
    generated = {"CYCLE.md", "REPORT.md", "figures.md", "task.md"}
    for path, text in doc_files(srcdir, man=True):
        if re.search(r"shared notes|DESIGN\.md", text):
            bad("%s points at notes outside the repository (DESIGN.md, shared notes)" % path)
        here = os.path.dirname(path)
        for ref in sorted(set(re.findall(r"[A-Za-z0-9_./-]+\.md\b", text))):
            if ref in generated or ref.startswith(("journals/", ".warden/", "results/")):
                continue
            if not (os.path.exists(os.path.join(srcdir, ref)) or
                    os.path.exists(os.path.join(srcdir, here, ref))):
                bad("%s refers to '%s', which is not in the repository" % (path, ref))
        for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
            if "://" not in link and not os.path.exists(os.path.join(srcdir, here, link)):
                bad("%s links to '%s', which is not in the repository" % (path, link))
        # a source file named by its path is where the path says (files
        # move: runner/ is laid out by folder); NNNN, NAME: placeholders
        for ref in sorted(set(re.findall(
                r"(?<![\w./-])((?:runner|allowlist|tests|ci|bench)/[\w./-]*\.(?:c|h|sh|py|inc))\b",
                text))):
            if not re.search(r"[A-Z]{4}", ref) and \
                    not os.path.exists(os.path.join(srcdir, ref)):
                bad("%s names '%s', which is not in the repository" % (path, ref))


def examples(help_text):
    """The lines under a command help's "Examples:", unindented."""
    lines = help_text.splitlines()
    if "Examples:" not in lines:
        return []
    out = []
    for line in lines[lines.index("Examples:") + 1:]:
        if not line.startswith("  "):
            break
        out.append(line.strip())
    return out


def check_help(help_json, help_text):
    """warden help: every command in exactly one group, in the text as in
    --json; every command's help has one to three examples, each calling
    warden with options the command has."""
    doc = json.load(open(help_json))
    text = read(help_text)
    cmds = {c["name"]: c for c in doc["commands"]}
    globals_ = set(doc["global_options"]) | {"-q", "-v", "--quiet", "--verbose"}
    ids = [g["id"] for g in doc.get("groups", [])]
    seen = {}
    for g in doc.get("groups", []):
        for n in g["commands"]:
            if n in seen:
                bad("'%s' is in groups %s and %s" % (n, seen[n], g["id"]))
            seen[n] = g["id"]
            if n not in cmds:
                bad("group '%s' names '%s', which is not a command" % (g["id"], n))
    for n, c in cmds.items():
        if c.get("group") not in ids:
            bad("'warden help --json' puts '%s' in no group" % n)
        elif seen.get(n) != c["group"]:
            bad("'%s' has group '%s' but is listed under '%s'" % (n, c["group"], seen.get(n)))
    # The text: a heading per group, then its commands, two spaces in.
    group, listed = None, {}
    titles = {g["title"]: g["id"] for g in doc.get("groups", [])}
    for line in text.splitlines():
        if line.endswith(":") and line[:-1] in titles:
            group = titles[line[:-1]]
            continue
        m = re.match(r"^  ([a-z][a-z-]*) ", line)
        if m and m.group(1) in cmds:
            if m.group(1) in listed:
                bad("'warden help' lists '%s' twice" % m.group(1))
            listed[m.group(1)] = group
        elif not line.strip():
            group = None
    for n, c in cmds.items():
        if listed.get(n) != c.get("group"):
            bad("'warden help' lists '%s' under %s, not under its group %s" % (n, listed.get(n), c.get("group")))
    # Examples.
    for n, c in cmds.items():
        ex = examples(c["help"])
        if not 1 <= len(ex) <= 3:
            bad("'warden help %s' has %d examples (one to three)" % (n, len(ex)))
        for e in ex:
            calls = [s for s in re.split(r"&&|\|\||;|\|", e) if re.search(r"\bwarden\b", s)]
            if not any(re.search(r"\bwarden( -\S+)* %s\b" % re.escape(n), s) for s in calls):
                bad("'warden help %s': the example '%s' does not run 'warden %s'" % (n, e, n))
            for s in calls:
                m = re.search(r"\bwarden((?: -\S+)*) ([a-z][a-z-]*)(.*)", s)
                if not m or m.group(2) not in cmds:
                    bad("'warden help %s': the example '%s' runs no command" % (n, e))
                    continue
                usage = " ".join(cmds[m.group(2)]["usage"])
                for o in re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", m.group(1) + m.group(3)):
                    if o not in globals_ and not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(o), usage):
                        bad("'warden help %s': the example '%s' passes %s, which 'warden %s' has not" % (n, e, o, m.group(2)))


README_LINES = 500
README_WIDTH = 120


def check_readme(srcdir):
    """README is the front door: under README_LINES lines, its prose (not
    its tables, not its command lines) within README_WIDTH columns, and it
    names the two commands, the tour and where to read on."""
    readme = read(os.path.join(srcdir, "README.md"))
    lines = readme.splitlines()
    if len(lines) > README_LINES:
        bad("README has %d lines; the budget is %d (move reference to doc/)" % (len(lines), README_LINES))
    for n, line in enumerate(lines, 1):
        if len(line) > README_WIDTH and not line.startswith(("|", "    ")):
            bad("README line %d is %d characters long" % (n, len(line)))
    heads = sections(readme, "## ")
    for h in ("The two commands", "A ten-minute tour: one maintenance cycle", "Usage", "Where to read on"):
        if h not in heads:
            bad("README has no section '## %s'" % h)
    for c in ("ci/demo", "ci/test", "ci/test --under-load"):
        if c not in heads.get("The two commands", ""):
            bad("README's 'The two commands' does not name %s" % c)


IDENT = re.compile(r"^[a-z][a-z0-9_]*(?:[.-][a-z0-9_]+)*$")


def check_fields(srcdir):
    """Schemas, outcomes, violation codes, JSON fields: every identifier
    the README shows in code in those sections is in the man page."""
    man = read(os.path.join(srcdir, "doc/warden.1.md"))
    man += "\n".join(read(p) for p in command_pages(srcdir).values())
    mantext = plain(man)
    want = {}
    for level in ("## ", "### "):
        for h, body in sections("\n".join(t for _, t in doc_files(srcdir)), level).items():
            if h.startswith(("The campaign", "The write-allowlist gate",
                             "The store and the journal")):
                want[h] = body
    if len(want) < 3:
        bad("README lacks one of the sections this check reads: %s" % sorted(want))
    for h, body in want.items():
        for para in re.split(r"\n\s*\n", body):
            if "`make " in para:
                continue    # how to build and fuzz: not the user's reference
            for tok in re.findall(r"`([^`]+)`", para):
                words = [t.strip("{}[]()'\"") for t in re.split(r"[\s,]+", tok.strip()) if t]
                if not words or not all(IDENT.match(t) for t in words):
                    continue    # a sentence, a path, a command line
                for t in words:
                    if not re.search(r"(?<![A-Za-z0-9_-])%s(?![A-Za-z0-9_-])" % re.escape(t), mantext):
                        bad("the docs (%s) show '%s'; no man page does" % (h, t))


# Objects whose keys are names (a roster, an engine, a split, a variable),
# not fields.
NAME_MAPS = {"rosters", "groups", "mirrors", "env", "splits", "engines"}


def field_names(doc, out):
    if isinstance(doc, list):
        for v in doc:
            field_names(v, out)
    elif isinstance(doc, dict):
        for k, v in doc.items():
            out.add(k)
            if k in NAME_MAPS and isinstance(v, dict):
                for w in v.values():
                    field_names(w, out)
            else:
                field_names(v, out)
    return out


def check_keys(srcdir):
    """warden(1) is the one reference of the policy, adapters and
    profiles: its POLICY, ADAPTERS and PROFILES name every field that
    the repository's own policy/warden.json, adapters and profiles use."""
    man = sections(read(os.path.join(srcdir, "doc/warden.1.md")), "# ")
    for sec, pattern in (("POLICY", "policy/warden.json"),
                         ("ADAPTERS", "adapters/engines/*.json"),
                         ("PROFILES", "adapters/profiles/*.json")):
        text = plain(man.get(sec, ""))
        for path in sorted(glob.glob(os.path.join(srcdir, pattern))):
            for k in sorted(field_names(json.load(open(path)), set())):
                if not re.search(r"(?<![A-Za-z0-9_-])%s(?![A-Za-z0-9_-])" % re.escape(k), text):
                    bad("%s uses '%s'; warden(1) %s does not name it" %
                        (os.path.relpath(path, srcdir), k, sec))


def check_index(srcdir):
    """doc/README.md, the index, links every Markdown page of doc/ (the
    man page sources included) and nothing that is not there."""
    d = os.path.join(srcdir, "doc")
    index = read(os.path.join(d, "README.md"))
    linked = set(os.path.normpath(l) for l in
                 re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", index))
    for name in sorted(os.listdir(d)):
        if name.endswith(".md") and name != "README.md" and name not in linked:
            bad("doc/README.md, the index, does not link doc/%s" % name)


# What a page says of how warden is made, not of what it does: an item of
# a tracker or a task list, by number or as "the issue".
INTERNAL = re.compile(r"\b(?:issues?|tasks?|items?|tickets?|todo)\s+#?\d+\b"
                      r"|\bthe (?:\w+ )?issue(?:'s)?\b|\bthis issue\b"
                      r"|\bedit the Markdown\b", re.I)


def check_internal(srcdir):
    """README, doc/ (the man page sources included), the folders' READMEs
    and warden-simengine's page name no internal issue or task, and no
    man page tells its reader to edit its source."""
    files = doc_files(srcdir, man=True)
    for top, _, names in os.walk(os.path.join(srcdir, "runner")):
        for n in names:
            if n == "README.md":
                p = os.path.join(top, n)
                files.append((os.path.relpath(p, srcdir), read(p)))
    sim = os.path.join(srcdir, "tests/simengine/warden-simengine.md")
    if os.path.exists(sim):
        files.append(("tests/simengine/warden-simengine.md", read(sim)))
    for path, text in files:
        for n, line in enumerate(text.splitlines(), 1):
            for m in INTERNAL.finditer(line):
                bad("%s:%d: '%s' is about how warden is developed" % (path, n, m.group(0)))


PARAGRAPH_LINES = 25


def check_paragraphs(*pages):
    """No paragraph of a rendered man page's DESCRIPTION runs past
    PARAGRAPH_LINES lines: a long description is split into paragraphs,
    lists and sections, as OpenBSD's and git's pages are. Each item of a
    list counts as a paragraph of its own."""
    for page in pages:
        sec, run, start = None, 0, 0
        lines = read(page).splitlines() + [""]
        for n, line in enumerate(lines, 1):
            if re.match(r"^[A-Z][A-Z ]+$", line):
                sec = line
            body = sec == "DESCRIPTION" and line.strip() and \
                len(line) - len(line.lstrip()) >= 7
            item = re.match(r"^ {7}(\u2022|\d+\.) ", line)
            if not body or item:    # a blank line, or a list item, ends one
                if run > PARAGRAPH_LINES:
                    bad("%s:%d: a DESCRIPTION paragraph of %d lines (at most %d)" %
                        (os.path.basename(page), start, run, PARAGRAPH_LINES))
                run = 0
            if body:
                if run == 0:
                    start = n
                run += 1


def main():
    what, args = sys.argv[1], sys.argv[2:]
    {"commands": check_commands, "exits": check_exits, "refs": check_refs,
     "fields": check_fields, "keys": check_keys, "help": check_help,
     "makefile": check_makefile, "readme": check_readme,
     "index": check_index, "internal": check_internal,
     "paragraphs": check_paragraphs}[what](*args)
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
