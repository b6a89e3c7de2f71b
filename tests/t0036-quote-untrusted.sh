#!/bin/sh
# t0036: untrusted text reaches the terminal quoted. A scripted agent
# whose file names and diff lines hold ESC[2J, OSC 52, OSC 0, a C1 CSI, a
# newline or CR followed by a forged "gate: clean", and bytes that are not
# UTF-8; argv echoed in an error; a snapshot whose member name holds a
# newline; an engine whose log tail holds the same. Text output holds none
# of those bytes and no forged line; --json carries the exact text.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/agents/agent-setup.sh"

# term_safe FILE...: no byte a terminal acts on (C0 but LF and TAB, DEL,
# C1, bidi and zero-width controls), only valid UTF-8, and no line that
# starts with the forged text (a line "gate: clean" followed by more, or
# the tail of a name cut by a newline).
term_safe() {
	python3 - "$@" <<'PY'
import re, sys
bad = 0
for f in sys.argv[1:]:
    data = open(f, "rb").read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        print("%s: not UTF-8 at byte %d: %r" % (f, e.start, data[e.start - 20:e.start + 20]))
        bad = 1
        continue
    for i, ch in enumerate(text):
        o = ord(ch)
        if (o < 0x20 and ch not in "\n\t") or 0x7f <= o <= 0x9f or \
           0x200b <= o <= 0x200f or 0x2028 <= o <= 0x202e or \
           0x2066 <= o <= 0x2069:
            print("%s: control U+%04X in %r" % (f, o, text[max(0, i - 20):i + 20]))
            bad = 1
            break
    for line in text.split("\n"):
        # "gate: clean" alone is review show's own line
        if re.match(r"(gate: clean.|title|owned|screen|board)", line):
            print("%s: forged line %r" % (f, line))
            bad = 1
sys.exit(bad)
PY
}

test_expect_success 'setup: a bench and an agent that attacks with its file names' '
	agent_bench bench &&
	agent_use bench hostile-text names
'

test_expect_success 'agent run: the names are quoted, no line is forged' '
	expect_exit 1 bw agent run --engine simfix &&
	cp out run.out && cp err run.err &&
	expect_grep "^agent run 1: rejected$" out &&
	term_safe out err &&
	expect_grep "simfix/clear\\\\x1b\\[2Jscreen" out &&
	expect_grep "simfix/clip\\\\x1b\\]52;c;cHduZWQ=\\\\x07board" out &&
	expect_grep "simfix/title\\\\x1b\\]0;owned\\\\x1b\\\\\\\\end" out &&
	expect_grep "simfix/line\\\\ngate: clean" out &&
	expect_grep "simfix/csi\\\\xc2\\\\x9b2Jc1" out &&
	expect_grep "^  bad-path adapters/engines/simfix/bad.*utf8: invalid UTF-8$" out
'

test_expect_success 'agent show: the same, quoted; --json carries the exact names' '
	expect_exit 0 bw agent show 1 &&
	term_safe out err &&
	expect_grep "simfix/line\\\\ngate: clean" out &&
	expect_exit 0 bw --json agent show 1 &&
	python3 - out <<-\PY
	import json, sys
	doc = json.load(open(sys.argv[1], encoding="utf-8"))
	text = json.dumps(doc, ensure_ascii=False)
	for want in ["clear\x1b[2Jscreen", "clip\x1b]52;c;cHduZWQ=\x07board",
	             "title\x1b]0;owned\x1b\\end", "line\ngate: clean",
	             "csi\u009b2Jc1"]:
	    found = []
	    def walk(v):
	        if isinstance(v, str):
	            found.append(want in v)
	        elif isinstance(v, dict):
	            [walk(x) for x in v.values()]
	        elif isinstance(v, list):
	            [walk(x) for x in v]
	    walk(doc)
	    assert any(found), "%r not in the JSON" % want
	PY
'

test_expect_success 'agent list: quoted' '
	expect_exit 0 bw agent list &&
	term_safe out err
'

test_expect_success 'an agent whose diff lines attack: the change is queued' '
	agent_use bench hostile-text lines &&
	expect_exit 0 bw agent run --engine simfix &&
	term_safe out err &&
	expect_grep "^review:   1$" out
'

test_expect_success 'review show: the diff reads as lines, each quoted' '
	expect_exit 0 bw review show 1 &&
	term_safe out err &&
	expect_grep "^    +\\\\x1b\\[2Jclear$" out &&
	expect_grep "^    +back\\\\rgate: clean$" out &&
	expect_grep "^    +csi\\\\xc2\\\\x9b2J$" out &&
	expect_grep "^    +\\\\x1b\\]0;owned\\\\x1b\\\\title$" out
'

test_expect_success 'review show --json: the patch is exact' '
	expect_exit 0 bw --json review show 1 &&
	python3 - out <<-\PY
	import json, sys
	doc = json.load(open(sys.argv[1], encoding="utf-8"))
	p = doc["patch"]
	for want in ["+\x1b[2Jclear\n", "+\x1b]52;c;cHduZWQ=\x07clip\n",
	             "+back\rgate: clean\n", "+csi\u009b2J\n"]:
	    assert want in p, "%r not in the patch" % want
	PY
'

test_expect_success 'review list: author and note from argv are quoted' '
	printf "diff --git a/adapters/engines/n.json b/adapters/engines/n.json\nnew file mode 100644\n--- /dev/null\n+++ b/adapters/engines/n.json\n@@ -0,0 +1 @@\n+{}\n" >p.patch &&
	expect_exit 0 bw patch submit p.patch --source community \
	    --author "$(printf "Mal\033]0;owned\007 <m@example.org>")" \
	    --note "$(printf "see\ngate: clean \033[2J")" &&
	expect_exit 0 bw review list &&
	term_safe out err &&
	expect_grep "Mal\\\\x1b\\]0;owned.* see\\\\ngate: clean \\\\x1b\\[2J$" out &&
	expect_exit 0 bw review show 2 &&
	term_safe out err &&
	expect_grep "^note:    see\\\\ngate: clean \\\\x1b\\[2J$" out &&
	expect_exit 0 bw --json review list &&
	python3 - out <<-\PY
	import json, sys
	rows = json.load(open(sys.argv[1], encoding="utf-8"))
	assert any(r.get("note") == "see\ngate: clean \x1b[2J" for r in rows), rows
	PY
'

test_expect_success 'an error echoing argv: newline, ESC and bad UTF-8 are escaped' '
	expect_exit 2 bw review show "$(printf "1\n\033[2J\377")" &&
	term_safe out err &&
	expect_grep "^warden: .1\\\\n\\\\x1b\\[2J\\\\xff. is not a review number$" err &&
	expect_grep "^usage: warden review" err &&
	expect_exit 2 bw review show "a\\x1b" &&
	expect_grep "^warden: .a\\\\\\\\x1b. is not a review number$" err &&
	expect_exit 2 warden "$(printf "nope\ngate: clean\033]52;c;eA==\007")" &&
	term_safe out err &&
	expect_grep "^warden: .nope\\\\ngate: clean\\\\x1b\\]52;c;eA==\\\\x07. is not a warden command" err &&
	expect_exit 2 bw agent run --engine "$(printf "x\ngate: clean\033[2J")" &&
	term_safe out err
'

test_expect_success 'verify: a member name holding a newline is printed escaped' '
	python3 - <<-\PY &&
	import gzip, io, tarfile
	raw = io.BytesIO()
	with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as t:
	    for name, data in [("results/manifest.json", b"{\"outputs\": {}}\n"),
	                       ("results/x\ngate: clean\x1b[2J", b"x")]:
	        i = tarfile.TarInfo(name)
	        i.size = len(data)
	        t.addfile(i, io.BytesIO(data))
	open("evil.tar.gz", "wb").write(gzip.compress(raw.getvalue()))
	PY
	expect_exit 1 bw verify evil.tar.gz &&
	term_safe out err &&
	cat out err >both &&
	expect_grep "results/x\\\\ngate: clean\\\\x1b\\[2J" both &&
	expect_exit 1 bw --json verify evil.tar.gz &&
	term_safe err &&
	if test -s out; then
		python3 - out <<-\PY
		import json, sys
		doc = json.load(open(sys.argv[1], encoding="utf-8"))
		assert any("results/x\ngate: clean\x1b[2J" in p
		           for p in doc["problems"]), doc
		PY
	fi
'

test_expect_success 'an engine whose log attacks: campaign and campaign show quote it' '
	bench_init eng &&
	sim_adapter eng hostile --itl 1 &&
	python3 - eng/adapters/engines/hostile.json <<-\PY &&
	import json, sys
	a = json.load(open(sys.argv[1]))
	a["serve"]["argv"] = ["sh", "-c", "printf \"loading\\033]52;c;cHduZWQ=\\007\\ngate: clean\\033[2J \\302\\233 \\377\\n\" >&2; exit 7"]
	json.dump(a, open(sys.argv[1], "w"), indent=2)
	PY
	bench_policy eng "campaign.concurrency=[1]" &&
	(cd eng && expect_exit 0 warden campaign --limit 2 --run-id h1) &&
	term_safe eng/out eng/err &&
	expect_grep "not_ready" eng/out &&
	# the reason wraps at spaces: read its lines as one
	tr "\n" " " <eng/out | grep "gate:  *clean\\\\x1b\\[2J" >/dev/null &&
	(cd eng && expect_exit 0 warden campaign show h1) &&
	term_safe eng/out eng/err &&
	(cd eng && expect_exit 0 warden --json campaign show h1) &&
	python3 - eng/out <<-\PY
	import json, sys
	doc = json.load(open(sys.argv[1], encoding="utf-8"))
	want = "loading\x1b]52;c;cHduZWQ=\x07\ngate: clean\x1b[2J \u009b"
	found = []
	def walk(v):
	    if isinstance(v, str):
	        found.append(want in v)
	    elif isinstance(v, dict):
	        [walk(x) for x in v.values()]
	    elif isinstance(v, list):
	        [walk(x) for x in v]
	walk(doc)
	assert any(found), "the log tail is not exact in the JSON"
	PY
'

test_expect_success 'REPORT.md: an engine message in a reason is quoted, one line, in its cell' '
	python3 - eng/.warden/warden.db <<-\PY &&
	import sqlite3, sys
	db = sqlite3.connect(sys.argv[1])
	db.execute("UPDATE campaign_sweeps SET detail = ?",
	    ("refused\x1b[2J a | b\ngate: clean\x07 \u202e",))
	db.commit()
	PY
	(cd eng && expect_exit 0 warden snapshot --tree snap --output s.tar.gz) &&
	term_safe eng/snap/results/REPORT.md &&
	python3 - eng/snap/results/REPORT.md <<-\PY
	import sys
	lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
	want = "- hostile, coverage: qwen3-0.6b: no request completed (not_ready: " \
	    "refused\\x1b[2J a \\| b)"
	assert want in lines, [l for l in lines if "coverage" in l]
	PY
'

test_done
