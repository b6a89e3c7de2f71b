#!/bin/sh
# t0005: `warden init` writes a repository on which `warden campaign` runs
# at once (a small workload per split, the simulated engine's adapter, a
# roster that uses it), and warden-init(1) lists exactly the files it writes.
. "$TOP_SRCDIR/tests/lib.sh"

PATH="$TOP_BUILDDIR:$PATH"
export PATH

test_expect_success 'init, then campaign with no other step, runs the whole grid' '
	warden init bench >/dev/null &&
	cd bench &&
	expect_exit 0 warden campaign --run-id first &&
	cat out &&
	expect_grep "^qwen3-0.6b / chat$" out &&
	expect_grep "^qwen3-0.6b / agent$" out &&
	test $(grep -c "^example-sim  *[0-9]* .*ok$" out) -eq 6 &&
	expect_no_grep "start_failed\|not_ready\|server_crash" out
'

test_expect_success 'the workloads init writes follow workloads/README.md' '
	cd bench &&
	python3 - workloads/chat.jsonl workloads/agent.jsonl <<-PY
	import json, sys
	for path in sys.argv[1:]:
	    split = path.split("/")[-1].split(".")[0]
	    lines = [json.loads(l) for l in open(path)]
	    timed = [l for l in lines if l["set"] == "timed"]
	    warm = [l for l in lines if l["set"] == "warmup"]
	    assert len(timed) >= 16 and len(warm) == 3, (path, len(timed))
	    ids = [l["id"] for l in lines]
	    assert len(set(ids)) == len(ids)
	    for l in lines:
	        assert l["id"].startswith(split + "-"), l["id"]
	        assert l["messages"][-1]["role"] == "user"
	        assert l["max_tokens"] > 0 and l["prompt_tokens_approx"] > 0
	        if split == "agent":
	            assert l["tools"] and "expect_tool_call" in l
	    if split == "agent":
	        assert any(l["expect_tool_call"] for l in timed)
	PY
'

test_expect_success 'the roster init writes runs the simulated engine' '
	cd bench &&
	python3 -c "import json; p = json.load(open(\"policy/warden.json\")); r = p[\"rosters\"][p[\"default_roster\"]]; print(r); assert r == [\"example-sim\"]" &&
	grep -q "\"warden-simengine\"" adapters/engines/example-sim.json &&
	expect_exit 0 warden lint
'

test_expect_success 'warden-init(1) lists exactly the files init writes' '
	sed -n "/^# DESCRIPTION/,/^# OPTIONS/p" "$TOP_SRCDIR/doc/warden-init.1.md" |
	    sed -n "s/^\*\([^*]*\)\*$/\1/p" | sort >listed &&
	test -s listed &&
	git -C bench ls-files | sort >written &&
	expect_equal listed written
'

test_done
