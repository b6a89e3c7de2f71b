#!/bin/sh
# t2007: an engine that never started is not a crash: a program that
# cannot be executed is start_failed (with the exec error), an engine that
# exits before it is ready (it cannot load its model) is not_ready (with
# its exit status and log tail); both show their reason in the text table
# as well as in --json.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

test_expect_success 'a bench with a missing program, an engine that cannot load its model, and one that works' '
	bench_init bench &&
	sim_adapter bench nosuchbin --itl 1 &&
	python3 - bench/adapters/engines/nosuchbin.json <<-PY &&
	import json, sys
	a = json.load(open(sys.argv[1]))
	a["serve"]["argv"][0] = "warden-no-such-engine"
	json.dump(a, open(sys.argv[1], "w"), indent=2)
	PY
	fake_adapter bench fakedead --exit-before-ready 7 &&
	sim_adapter bench simfine --itl 1 --prefill-rate 50000 &&
	bench_policy bench "campaign.concurrency=[1, 4]" &&
	cd bench &&
	expect_exit 0 warden campaign --limit 4 --run-id s1 &&
	cp out ../table.out &&
	expect_exit 0 warden --json campaign --resume --run-id s1 &&
	cp out ../report.json
'

test_expect_success 'a program that cannot be executed is start_failed, not server_crash' '
	expect_grep "^nosuchbin  *1 .* 0/4  *crashed$" table.out &&
	expect_grep "^  outcome start_failed: " table.out &&
	expect_grep "^nosuchbin  *4 .* 0/4  *crashed$" table.out &&
	expect_no_grep "server_crash" table.out
'

test_expect_success 'start_failed names the program and the exec error in the table' '
	sed -n "/^nosuchbin  *1 .*crashed$/{n;p;}" table.out >reason &&
	cat reason &&
	expect_grep "^  .*warden-no-such-engine.*No such file or directory" reason
'

test_expect_success 'an engine that exits before it is ready is not_ready with its exit status and log tail' '
	expect_grep "^fakedead  *1 .* 0/4  *crashed$" table.out &&
	expect_grep "^fakedead  *4 .* 0/4  *crashed$" table.out &&
	sed -n "/^fakedead  *1 .*crashed$/{n;p;n;p;}" table.out >reason &&
	cat reason &&
	expect_grep "^  outcome not_ready: .*exit status 7" reason &&
	tr -d "\n" <reason | grep "fatal: *cannot *load *model"
'

test_expect_success 'the rest of a failed engine grid is not run, and the engine after it runs' '
	sed -n "/^fakedead  *4 .*crashed$/{n;p;}" table.out >reason &&
	expect_grep "not run" reason &&
	expect_grep "^simfine  *4 .* 4/4  *ok$" table.out
'

test_expect_success '--json carries the outcomes and their details' '
	python3 - report.json <<-PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	rows = {(r["engine"], r["concurrency"]): r for r in d["tables"][0]["rows"]}
	r = rows[("nosuchbin", 1)]
	assert r["outcome"] == "start_failed", r["outcome"]
	assert "warden-no-such-engine" in r["detail"], r["detail"]
	r = rows[("fakedead", 1)]
	assert r["outcome"] == "not_ready", r["outcome"]
	assert "exit status 7" in r["detail"], r["detail"]
	assert "fatal: cannot load model" in r["detail"], r["detail"]
	assert rows[("simfine", 1)]["outcome"] == "complete"
	PY
'

test_expect_success 'doc/campaign.md and the man page list both outcomes' '
	grep -q "start_failed" "$TOP_SRCDIR/doc/campaign.md" &&
	grep -q "start_failed" "$TOP_SRCDIR/doc/warden-campaign.1.md"
'

test_done
