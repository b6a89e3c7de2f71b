#!/usr/bin/env python3
"""doc/md2man.py SRC.md NAME SECTION > OUT.1

Turn the small Markdown subset of tests/simengine/warden-simengine.md into
a man page: ## and ### headings, paragraphs, indented code blocks, option
lines "`--opt` *ARG* - text" and definition lists ("`term`" then ":   text").
Run by hand when the Markdown changes; the output is committed.
"""
import re
import sys


def inline(text):
    text = text.replace("\\", "\\e")
    text = re.sub(r"`([^`]*)`", lambda m: "\\fB" + m.group(1) + "\\fR", text)
    text = re.sub(r"\*([^*\s][^*]*)\*", lambda m: "\\fI" + m.group(1) + "\\fR", text)
    text = text.replace("-", "\\-").replace(" \u2014 ", " \\(em ")
    return text


def line_out(text):
    out = inline(text)
    if out.startswith(".") or out.startswith("'"):
        out = "\\&" + out
    return out


def main():
    src, name, section = sys.argv[1], sys.argv[2], sys.argv[3]
    lines = open(src, encoding="utf-8").read().split("\n")
    out = ['.\\" Generated from %s by doc/md2man.py; edit the Markdown.' % src,
           '.TH %s %s "December 2026" "warden" "User Commands"' % (name.upper(), section)]
    in_code = False
    for raw in lines[1:]:
        if raw.startswith("    ") and raw.strip():
            if not in_code:
                out.append(".PP\n.nf")
                in_code = True
            out.append(line_out(raw[4:]))
            continue
        if in_code:
            out.append(".fi")
            in_code = False
        if raw.startswith("### "):
            out.append(".SS " + inline(raw[4:]))
        elif raw.startswith("## "):
            out.append(".SH " + inline(raw[3:]).upper())
        elif not raw.strip():
            out.append(".PP")
        elif raw.startswith(":   "):
            out.append(line_out(raw[4:]))
        elif raw.startswith("`") and (" \u2014 " in raw):
            term, desc = raw.split(" \u2014 ", 1)
            out.append(".TP\n" + line_out(term) + "\n" + line_out(desc))
        elif raw.startswith("`") and raw.rstrip().endswith("`"):
            out.append(".TP\n" + line_out(raw))
        else:
            out.append(line_out(raw))
    if in_code:
        out.append(".fi")
    # Collapse runs of paragraph breaks and drop one right before a heading.
    text = "\n".join(out)
    text = re.sub(r"(\.PP\n)+", ".PP\n", text)
    text = re.sub(r"\.PP\n(\.S[HS] )", r"\1", text)
    text = re.sub(r"\.PP\n\.TP", ".TP", text)
    sys.stdout.write(text.rstrip("\n") + "\n.SH SEE ALSO\n.BR warden (1)\n")


main()
