#!/bin/sh
# bench/journal-verify.sh - how long `warden journal verify` takes once the
# journal is exported and anchored, against the same journal verified
# before its first export (the chain alone) in the same run.
#
# Three journals: 3,001 small entries; 601 entries of 30 KB; and a year
# of fortnightly cycles (26 cycles of 800 entries, each cycle exported,
# so 26 anchors and a 20,801-line committed export). Entries are written
# straight into a warden store by a small generator (the chain computed
# as warden computes it), then `warden journal export` commits them.
# Prints seconds and the ratio exported / unexported: linear verification
# keeps it near 1-2; the quadratic one of before grew with the journal.
set -eu
: "${WARDEN:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/warden-bench-journal.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
unset WARDEN_REPO WARDEN_CYCLE

# add DB COUNT BYTES CYCLE: append COUNT entries with bodies of about BYTES.
add() {
	python3 - "$@" <<'PY'
import hashlib, json, sqlite3, sys
db, count, size, cycle = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
c = sqlite3.connect(db)
seq, prev = c.execute("SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
filler = ("0123456789abcdef" * (size // 16 + 1))[:size]
rows = []
for i in range(count):
    seq += 1
    body = {"n": seq, "text": filler}
    e = {"body": body, "cycle": cycle, "kind": "bench.entry", "seq": seq,
         "subject": "bench/%d" % seq, "time": "2026-12-01T00:00:00.000Z"}
    canon = json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    h = hashlib.sha256((prev + canon).encode()).hexdigest()
    rows.append((seq, e["time"], cycle, e["kind"], e["subject"],
                 json.dumps(body, sort_keys=True, separators=(",", ":")), prev, h))
    prev = h
c.executemany("INSERT INTO journal VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
c.execute("UPDATE meta SET value = ? WHERE key = 'journal_head'", ("%d %s" % (seq, prev),))
c.commit()
PY
}

# seconds CMD...: wall time of CMD, best of three.
seconds() {
	python3 - "$@" <<'PY'
import subprocess, sys, time
best = None
for _ in range(3):
    t = time.monotonic()
    subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
    d = time.monotonic() - t
    best = d if best is None or d < best else best
print("%.3f" % best)
PY
}

# case NAME COUNT BYTES CYCLES: a journal of CYCLES x COUNT entries.
case_run() {
	name=$1 count=$2 size=$3 cycles=$4
	d="$tmp/$name"
	"$WARDEN" init "$d" >/dev/null
	add "$d/.warden/warden.db" $((count * cycles)) "$size" c0
	before=$(seconds "$WARDEN" --repo "$d" journal verify)
	rm -rf "$d"
	"$WARDEN" init "$d" >/dev/null
	i=1
	while [ "$i" -le "$cycles" ]; do
		add "$d/.warden/warden.db" "$count" "$size" "c$i"
		"$WARDEN" --repo "$d" -q journal export >/dev/null
		i=$((i + 1))
	done
	after=$(seconds "$WARDEN" --repo "$d" journal verify)
	entries=$((count * cycles + 1))
	python3 -c "print('%-28s %7d entries  unexported %7.3f s  exported %7.3f s  ratio %5.2f' % ('$name', $entries, $before, $after, $after / max($before, 0.001)))"
}

echo "journal verify: exported and anchored against unexported (best of 3)"
case_run "3,001 small" 3000 40 1
case_run "601 of 30 KB" 600 30000 1
case_run "a year: 26 cycles x 800" 800 200 26
