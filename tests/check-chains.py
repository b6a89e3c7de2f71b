#!/usr/bin/env python3
"""tests/check-chains.py - no test body ends its && chain early.

A test body (tests/lib.sh's test_expect_success) runs under set -e, and
set -e ignores a failure anywhere but at the end of an && chain: a
statement the body goes on from with a newline or ';' instead of '&&'
ends the chain, and a check before it fails unseen. Such a test cannot
fail there (t6004 waited 120 s for the wrong run and passed).

    check-chains.py FILE...

Prints one line per statement that ends its chain at the top level of a
body (a newline, or a ';' with more after it) (within a loop, if, case or braces a body ends its own way, as
"|| exit 1"), and exits 1 if there was any. Allowed ends: && || | \\ &
(a process started in the background, when it ends a chain of its own:
"a && b &" sends a to the background too), an opening "{", "(", "then",
"do", "else", "in", ";;", and "|| exit 1", "|| return 1" or a group
ending in "exit 1; }" (an explicit stop).
"""
import re
import sys

OK_END = re.compile(r'(&&|\|\||\||\\|\{|\(|\bthen|\bdo|\belse|;;|\bin|&'
                    r'|\bexit 1|\breturn 1|exit 1; *\})$')
BODY = re.compile(r"^test_expect_success(?:_if \S+)? ('[^']*'|\"[^\"]*\") '\n"
                  r"(.*?)\n'$", re.S | re.M)
HEREDOC = re.compile(r"<<-?\\?[\"']?([A-Za-z_]+)[\"']?")


def strip_line(raw, q):
    """raw without its comment; and the quote still open at its end."""
    line, j = '', 0
    while j < len(raw):
        c = raw[j]
        if q:
            if c == '\\' and q == '"':
                line += raw[j:j + 2]
                j += 2
                continue
            if c == q:
                q = None
        else:
            if c == '\\' and j + 1 < len(raw):
                line += raw[j:j + 2]
                j += 2
                continue
            if c == '"':
                q = c
            elif c == '#' and (j == 0 or raw[j - 1] in ' \t'):
                break
        line += c
        j += 1
    return line, q


def unquoted(s):
    """s with what quotes and command substitutions hold blanked out, so
    that only the shell's own words and operators are left."""
    out, stack, j = [], [None], 0
    while j < len(s):
        c, top = s[j], stack[-1]
        if c == '\\' and top != "'":
            out.append('  ' if top else s[j:j + 2])
            j += 2
            continue
        if top == "'":
            if c == "'":
                stack.pop()
            out.append(' ')
        elif s.startswith('$(', j):
            stack.append('(')
            out.append('  ')
            j += 2
            continue
        elif top == '(' and c in '()':
            if c == '(':
                stack.append('(')   # $((i + 1)) and ( ) within
            else:
                stack.pop()
            out.append(' ')
        elif top == '"' and c == '"':
            stack.pop()
            out.append(' ')
        elif c in '"\'' and top != '"':
            stack.append(c)
            out.append(' ')
        else:
            out.append(c if top is None else ' ')
        j += 1
    return ''.join(out)


TOKEN = re.compile(r'[A-Za-z_][\w.-]*|&&|\|\||;;|[{}()&;|]')
OPENERS = ('for', 'while', 'until', 'if', 'case', '{', '(')
CLOSERS = ('done', 'fi', 'esac', '}', ')')
# after these a word is in command position, where a keyword is one
COMMAND_START = ('&&', '||', ';;', ';', '&', '|', '{', '(', 'then', 'do',
                 'else')


def tokens(bare, in_case=False):
    """(token, depth before it, its depth change) of the operators, group
    marks and keywords of the unquoted line bare; a keyword counts only
    where a command starts, and within a case body no parenthesis does
    (a pattern's ')' closes nothing)."""
    depth, start, out = 0, True, []
    for m in TOKEN.finditer(bare):
        t = m.group(0)
        word = t[0].isalpha() or t[0] == '_'
        delta = 0
        if t in ('(', ')') and in_case:
            delta = 0
        elif t in OPENERS and (start or not word):
            delta = 1
        elif t in CLOSERS and (start or not word):
            delta = -1
        out.append((t, depth, delta, m.end()))
        depth = max(0, depth + delta)
        start = t in COMMAND_START or (word and start and delta != 0)
    return out


def statements(body):
    """(depth, text) of each line of a body outside quotes and here-
    documents; depth counts the compounds open before it."""
    out, buf, q, heredoc, depth, in_case = [], '', None, None, 0, 0
    # a body is single-quoted: '"'"' is how it holds a '
    for raw in body.replace("'\"'\"'", "'").split('\n'):
        if heredoc:
            if raw.strip() == heredoc:
                heredoc = None
            continue
        line, q = strip_line(raw, q)
        buf += line
        h = HEREDOC.search(line)
        if h and not q:
            heredoc = h.group(1)
        if q:
            buf += '\n'
            continue
        s, buf = buf.strip(), ''
        if not s:
            continue
        out.append((depth, s))
        for t, _, delta, _ in tokens(unquoted(s), in_case > 0):
            if t == 'case' and delta:
                in_case += 1
            elif t == 'esac' and delta:
                in_case -= 1
            depth = max(0, depth + delta)
    return out


def top_semicolon(bare):
    """Whether the unquoted line bare has a ';' outside compounds and
    groups with more after it: there the chain before it ends."""
    return any(t == ';' and depth == 0 and bare[end:].strip()
               for t, depth, _, end in tokens(bare))


def backgrounds_chain(bare, chained):
    """Whether the unquoted line bare ends with a '&' outside compounds
    and groups that sends an && chain to the background: one continued
    from the line before (chained), or one with an && of its own outside
    them."""
    and_top = False
    for t, depth, _, end in tokens(bare):
        if t == '&&' and depth == 0:
            and_top = True
        elif t == '&' and depth == 0 and not bare[end:].strip():
            return bool(chained or and_top)
    return False


def opens_group(bare):
    """Whether the unquoted line bare leaves a compound or group open for
    the next lines to close."""
    return sum(delta for _, _, delta, _ in tokens(bare)) > 0


def main(paths):
    bad = 0
    for path in paths:
        src = open(path, encoding='utf-8').read()
        for m in BODY.finditer(src):
            line0 = src.count('\n', 0, m.start(2)) + 1
            st = statements(m.group(2))
            for i, (depth, s) in enumerate(st):
                bare = unquoted(s).rstrip()
                chained = i > 0 and re.search(r'(&&|\|\|)$',
                                              unquoted(st[i - 1][1]).rstrip())
                if depth == 0 and backgrounds_chain(bare, chained):
                    print("%s: in the test at line %d: '&' sends its whole "
                          "&& chain to the background, at '%s' (put what "
                          "goes there in braces: { cmd & } &&)"
                          % (path, line0, s[:60]))
                    bad += 1
                    continue
                if depth == 0 and top_semicolon(bare):
                    print("%s: in the test at line %d: a ';' ends the && "
                          "chain in '%s'" % (path, line0, s[:70]))
                    bad += 1
                    continue
                if i == len(st) - 1 or depth > 0 or OK_END.search(s):
                    continue
                if st[i + 1][1].startswith('||') or opens_group(bare):
                    continue
                print("%s: in the test at line %d: the && chain ends after "
                      "'%s'" % (path, line0, s[:70]))
                bad += 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
