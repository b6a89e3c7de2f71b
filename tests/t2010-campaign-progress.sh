#!/bin/sh
# t2010: progress as a user sees it. On a terminal the live line is
# clipped to the terminal's width and redrawn in place, and carries the
# whole campaign's ETA beside the sweep's. Not on a terminal, a line when
# a sweep starts and one every N seconds while it runs. After SIGINT or
# SIGTERM warden stops the engine, says how to resume, and the resume
# finishes the run. The signal comes while the second sweep's engine is
# held at its start (tests/fixtures/engines/gate.sh), never after the
# campaign ended, however late a loaded machine runs the test.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

HAVE_PTY=no
if command -v script >/dev/null 2>&1 &&
    script -qec "sh -c 'test -t 2'" /dev/null >/dev/null 2>&1; then
	HAVE_PTY=yes
fi

# The program that runs CMD... with SIGINT at its default disposition (a
# non-interactive shell starts background jobs with SIGINT ignored); it
# execs CMD, so $! of "python3 -c $WITH_SIGINT CMD... &" is CMD's pid.
WITH_SIGINT='import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])'

# wait_done RUN N: wait until N sweeps of RUN are done (120 s: only a
# defect waits that long).
wait_done() {
	_n=0
	while [ "$(sqlite3 .warden/warden.db "select count(*) from campaign_sweeps where run_id = '$1' and state = 'done'" 2>/dev/null || echo 0)" -lt "$2" ]; do
		_n=$((_n + 1))
		[ $_n -lt 1200 ] || return 1
		sleep 0.1
	done
}

test_expect_success 'a bench with a serial engine (about 70 ms a request)' '
	bench_init bench &&
	cp "$TOP_SRCDIR/tests/fixtures/engines/gate.sh" bench/ &&
	_adapter bench simp "sh {repo}/gate.sh {concurrency} warden-simengine" \
	    --schedule serial --itl 1 --prefill-rate 50000 &&
	# held at its start as long as a loaded machine makes the test wait
	python3 -c "import json; p = \"bench/adapters/engines/simp.json\"; a = json.load(open(p)); a[\"serve\"][\"ready_timeout_s\"] = 600; json.dump(a, open(p, \"w\"), indent=2)" &&
	bench_policy bench "campaign.concurrency=[1, 2]"
'

test_expect_success_if $HAVE_PTY 'on a 70-column terminal the line is clipped and redrawn in place' '
	cd bench &&
	script -qec "stty cols 70; \"$WARDEN\" campaign --limit 12 --run-id tty70 >/dev/null" ../tty.out >/dev/null &&
	python3 - ../tty.out <<-PY
	import re, sys
	raw = open(sys.argv[1], "rb").read().decode()
	# script(1) adds a line of its own before and after
	lines = [l for l in raw.replace("\r\n", "\n").split("\n")
	         if not l.startswith("Script ")]
	# one finished line per sweep; the live redraws stay on that line
	finals = [l for l in lines if "complete, 12/12 ok" in l]
	assert len(finals) == 2, lines
	assert len([l for l in lines if l.strip()]) == 2, lines
	seen = 0
	for l in lines:
	    for seg in l.split("\r"):
	        seg = re.sub(r"\x1b\[K", "", seg)
	        if not seg:
	            continue
	        seen += 1
	        assert len(seg) < 70, (len(seg), seg)
	assert seen > 4, seen
	PY
'

test_expect_success_if $HAVE_PTY 'the live line shows the campaign ETA as well as the sweep ETA' '
	cd bench &&
	script -qec "stty cols 200; \"$WARDEN\" campaign --limit 12 --run-id tty200 >/dev/null" ../wide.out >/dev/null &&
	tr "\r" "\n" <../wide.out >../wide.lines &&
	expect_grep "^.*sweep 1/2 (eta [0-9]* s, campaign eta [0-9]* s) simp qwen3-0.6b chat c=1: measuring [0-9]*/12 requests, [0-9.]* tok/s$" ../wide.lines &&
	expect_grep "^.*sweep 2/2 (campaign eta [0-9]* s) simp qwen3-0.6b chat c=2: starting$" ../wide.lines
'

# Lines off a terminal are checked for what they say and in what order,
# never counted against the clock: the interval is short next to a
# sweep (25 requests of about 70 ms on the serial engine's own clock, so
# at least 1.7 s however busy the machine), so every sweep shows some.
#
# sweeps_check FILE SWEEPS LIMIT: per sweep, the first line says it is
# starting, the last that it is complete, and at least one line comes
# every interval in between; sweep 1 shows its ETA and the campaign's.
sweeps_check() {
	python3 - "$@" <<-PY
	import re, sys
	path, sweeps, limit = sys.argv[1], int(sys.argv[2]), sys.argv[3]
	lines = [l.rstrip("\n") for l in open(path)]
	for k in range(1, sweeps + 1):
	    mine = [l for l in lines if l.startswith("sweep %d/%d " % (k, sweeps))]
	    assert mine, (k, lines)
	    assert re.search(r" c=[0-9]+: starting(, waited [0-9]+ s)?$", mine[0]), (k, mine)
	    done = [l for l in mine if ": complete, %s/%s ok" % (limit, limit) in l]
	    assert len(done) == 1 and done[0] == mine[-1], (k, mine)
	    assert len(mine) >= 3, (k, mine)
	first = [l for l in lines if l.startswith("sweep 1/")]
	assert any(re.match(r"^sweep 1/[0-9]+ \(eta [0-9]* s, campaign eta [0-9]* s\) simp qwen3-0.6b chat c=1: measuring [0-9]*/%s requests, [0-9.]* tok/s$" % limit, l) for l in first), first
	PY
}

test_expect_success 'not on a terminal: a line at the start of each sweep and every interval' '
	cd bench &&
	expect_exit 0 warden campaign --limit 25 --run-id log1 --progress-interval 0.2 &&
	cat err &&
	sweeps_check err 2 25
'

test_expect_success 'the interval comes from the policy, and 0 turns the periodic lines off' '
	cd bench &&
	bench_policy . "campaign.progress_interval_s=0.2" &&
	expect_exit 0 warden campaign --limit 25 --run-id log2 --concurrency 1 &&
	sweeps_check err 1 25 &&
	expect_exit 0 warden campaign --limit 25 --run-id log3 --concurrency 1 --progress-interval 0 &&
	expect_no_grep ": measuring" err &&
	expect_grep "^sweep 1/1 simp .*: starting" err &&
	bench_policy . "campaign.progress_interval_s=30" &&
	warden lint
'

# interrupted SIG RUN: run a campaign in the background, send SIG while
# its second sweep's engine is held at its start (gate.sh), and keep what
# it printed; then let engines start again.
interrupted() {
	rm -f waiting
	: >hold
	python3 -c "$WITH_SIGINT" "$WARDEN" campaign --limit 30 --run-id "$2" \
	    >"../$2.out" 2>"../$2.err" &
	_pid=$!
	_n=0
	while [ ! -e waiting ] && [ $_n -lt 1200 ]; do sleep 0.1; _n=$((_n + 1)); done
	wait_done "$2" 1 &&
	kill "-$1" $_pid
	_rc=0
	wait $_pid || _rc=$?
	rm -f hold waiting
	echo "exit $_rc"
	return 0
}

test_expect_success 'SIGINT stops the campaign, says how to resume, and resume finishes it' '
	cd bench &&
	interrupted INT int1 >rc &&
	cat rc ../int1.err &&
	test "$(cat rc)" = "exit 3" &&
	expect_grep "^warden: campaign run int1 interrupted by SIGINT; continue it with .warden campaign --resume --run-id int1.$" ../int1.err &&
	test "$(sqlite3 .warden/warden.db "select state from campaign_runs where run_id = '"'"'int1'"'"'")" = running &&
	! ps -eo args | grep -F "$TEST_DIR" | grep -v -e grep -e "ps -eo" &&
	expect_exit 0 warden campaign --resume --run-id int1 &&
	test "$(sqlite3 .warden/warden.db "select count(*) from campaign_sweeps where run_id = '"'"'int1'"'"' and outcome = '"'"'complete'"'"'")" = 2
'

test_expect_success 'SIGTERM does the same' '
	cd bench &&
	interrupted TERM term1 >rc &&
	test "$(cat rc)" = "exit 3" &&
	expect_grep "^warden: campaign run term1 interrupted by SIGTERM; continue it with .warden campaign --resume --run-id term1.$" ../term1.err
'

test_expect_success 'not on a terminal: an engine slow to start shows life too' '
	fake_adapter bench slowstart --ready-after 2.5 &&
	cd bench &&
	expect_exit 0 warden campaign --engine slowstart --limit 1 \
	    --concurrency 1 --run-id slow --progress-interval 1 &&
	cat err &&
	test $(grep -c "^sweep 1/1 slowstart qwen3-0.6b chat c=1: starting, waited [0-9]* s$" err) -ge 1
'

test_done
