#!/bin/sh
# t2032: an engine whose server calls setsid() does not outlive its sweep.
# The adapter runs `sh -c "setsid warden-simengine ... & wait"`: the server
# leaves the group warden signals, but warden is the subreaper of its
# engines and stops every descendant, so after each sweep no process of
# the engine is left and its port is free. The test counts the engine's
# processes (by their command lines, which name this scratch directory)
# before, during and after the campaign.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

if ! command -v setsid >/dev/null 2>&1; then
	echo "1..0 # SKIP no setsid program"
	rm -rf "$TEST_DIR"
	exit 0
fi

# The engine processes of this script still alive (zombies not counted).
count_engines() {
	ps -eo stat=,args= | awk -v d="$TEST_DIR/" '
	    $1 !~ /^Z/ && index($0, "warden-" "simengine") && index($0, d) { n++ }
	    END { print n + 0 }'
}

test_expect_success 'a bench whose engine server calls setsid' '
	bench_init bench &&
	sim_adapter bench simsetsid --itl 1 --prefill-rate 50000 &&
	bench_policy bench "campaign.concurrency=[1, 2]" "caps.warmups=1" &&
	python3 - bench <<-\EOF &&
	import json, sys
	path = sys.argv[1] + "/adapters/engines/simsetsid.json"
	a = json.load(open(path))
	cmd = " ".join(a["serve"]["argv"]) + " --trace {log_dir}/trace-c{concurrency}.jsonl"
	a["serve"]["argv"] = ["sh", "-c", "setsid " + cmd + " & wait"]
	json.dump(a, open(path, "w"), indent=2)
	EOF
	(cd bench && warden lint) &&
	test "$(count_engines)" = 0
'

test_expect_success 'the server leaves the group warden signals, yet its sweep stops it' '
	{ (cd bench && exec "$WARDEN" campaign --limit 60 --run-id watch \
	    >../watch.out 2>&1) & } &&
	wpid=$! &&
	# wait for the server itself (not setsid(1) about to exec it)
	n=0 &&
	while spid=$(ps -eo pid=,args= | awk -v d="$TEST_DIR/" "\$2 == \"warden-simengine\" && index(\$0, d) { print \$1; exit }") &&
	    [ -z "$spid" ] && [ $n -lt 1200 ]; do
		sleep 0.05; n=$((n + 1))
	done &&
	echo "server $spid, warden $wpid" &&
	test -n "$spid" &&
	test "$(ps -o pgid= -p "$spid" | tr -d " ")" = "$spid" &&
	test "$(ps -o sid= -p "$spid" | tr -d " ")" = "$spid" &&
	wait "$wpid" &&
	expect_grep "^simsetsid  *2 .* 60/60  *ok$" watch.out &&
	! kill -0 "$spid" 2>/dev/null &&
	test "$(count_engines)" = 0
'

test_expect_success 'no process of the engine outlives a campaign of two sweeps' '
	test "$(count_engines)" = 0 &&
	cd bench &&
	expect_exit 0 warden campaign --limit 4 --run-id r1 &&
	expect_grep "^simsetsid  *1 .* 4/4  *ok$" out &&
	expect_grep "^simsetsid  *2 .* 4/4  *ok$" out &&
	echo "engine processes after: $(count_engines)" &&
	test "$(count_engines)" = 0
'

test_done
