#!/usr/bin/env python3
# check-man-words.py PAGE.md PAGE.txt: every identifier with an underscore
# that the Markdown of a manual page shows outside code appears as often in
# the page as groff renders it (lowdown drops a pair of underscores it takes
# for emphasis); exit 1 naming those it lost.
import re, sys
lines, code, blank = [], False, True
for l in open(sys.argv[1]).read().split("\n"):
    if re.match(r"(    |\t)", l) and (blank or code):
        code = True
    elif l.strip():
        code = False
    blank = not l.strip()
    if not code:
        lines.append(re.sub(r"`[^`]*`", "", l))
md = "\n".join(lines).replace("\\_", "_")
text = open(sys.argv[2]).read()
text = re.sub("\u2010\n\\s*", "", text)
pat = r"(?<![A-Za-z0-9_])[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+"
want, got = {}, {}
for w in re.findall(pat, md):
    want[w] = want.get(w, 0) + 1
for w in re.findall(pat, text):
    got[w] = got.get(w, 0) + 1
lost = sorted(w for w in want if got.get(w, 0) < want[w])
if lost:
    print("%s renders without its underscores: %s" % (sys.argv[1], ", ".join(lost)))
    sys.exit(1)
