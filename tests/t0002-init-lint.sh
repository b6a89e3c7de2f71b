#!/bin/sh
# warden init makes a benchmark repository; warden lint checks it and
# names file, line, column and field for each kind of bad input.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

test_expect_success 'init creates the layout as one commit with an official branch' '
	warden init bench >out &&
	expect_grep "initialized benchmark repository in bench" out &&
	for f in policy/warden.json adapters/engines/example-sim.json \
	    adapters/profiles/qwen3-0.6b.json README.md .gitignore; do
		test -f bench/$f || { echo "missing $f"; exit 1; }
	done &&
	test "$(git -C bench rev-list --count HEAD)" = 1 &&
	test "$(git -C bench rev-parse official)" = "$(git -C bench rev-parse HEAD)" &&
	git -C bench fsck --strict 2>&1 &&
	test -z "$(git -C bench status --porcelain)"
'

test_expect_success 'init keeps .warden out of git' '
	test -f bench/.warden/warden.db &&
	git -C bench check-ignore -q .warden/warden.db
'

test_expect_success 'init refuses a non-empty directory and exits 2' '
	mkdir full && echo x >full/file &&
	expect_exit 2 warden init full &&
	expect_grep "exists and is not empty" err &&
	test "$(ls full)" = file
'

test_expect_success 'init fills an empty clone, keeping its remote; refuses a repository with history' '
	git init -q --bare origin.git &&
	git clone -q origin.git clone 2>/dev/null &&
	expect_exit 0 warden init clone &&
	test "$(git -C clone rev-list --count official)" = 1 &&
	test "$(git -C clone rev-parse HEAD)" = "$(git -C clone rev-parse official)" &&
	test "$(git -C clone remote get-url origin)" = "$PWD/origin.git" &&
	test -z "$(git -C clone status --porcelain)" &&
	git -C clone push -q origin official &&
	test "$(git -C origin.git rev-parse official)" = "$(git -C clone rev-parse official)" &&
	git init -q used &&
	git -C used commit -q --allow-empty -m first &&
	expect_exit 2 warden init used &&
	expect_grep "is a git repository that already has commits or branches" err &&
	test "$(git -C used rev-list --count HEAD)" = 1 &&
	test ! -e used/policy
'

test_expect_success 'lint passes on a fresh repository' '
	cd bench && expect_exit 0 warden lint &&
	expect_grep "6 files checked, 0 problems" err &&
	expect_exit 0 warden -v lint &&
	expect_grep "^workloads/chat.jsonl: ok$" err &&
	expect_grep "^workloads/agent.jsonl: ok$" err &&
	expect_grep "^workloads/fidelity: ok$" err
'

test_expect_success 'lint names every bad line of a workload split' '
	cd bench &&
	sed -i "3s/.*/{\"broken\": /; 5s/.*/[1, 2]/" workloads/chat.jsonl &&
	expect_exit 2 warden lint &&
	cat >expect <<-\EOF2 &&
	workloads/chat.jsonl:3:11: invalid JSON: unexpected token near end of file
	workloads/chat.jsonl:5: not a workload line (an object with '"'"'messages'"'"')
	EOF2
	expect_equal expect out &&
	expect_exit 2 warden --json lint workloads/chat.jsonl &&
	python3 -c "
import json
d = json.load(open(\"out\"))
assert d[\"files\"] == 1, d
assert [(p[\"line\"], p[\"column\"], p[\"class\"]) for p in d[\"problems\"]] == [(3, 11, \"input\"), (5, 0, \"schema\")], d
" &&
	git checkout -q workloads/chat.jsonl &&
	: >workloads/agent.jsonl &&
	expect_exit 1 warden lint workloads/agent.jsonl &&
	expect_grep "^workloads/agent.jsonl: no timed prompts$" out &&
	git checkout -q workloads/agent.jsonl
'

test_expect_success 'lint catches a split without its workload file' '
	cd bench &&
	mv workloads/agent.jsonl workloads/agent2.jsonl &&
	expect_exit 1 warden lint &&
	expect_grep "^policy/warden.json:[0-9]*:[0-9]*: .campaign.splits. names split .agent., but workloads/agent.jsonl does not exist$" out &&
	mv workloads/agent2.jsonl workloads/agent.jsonl
'

test_expect_success 'lint loads the fidelity task as the cycle does, where the cycle runs it' '
	cd bench &&
	sed -i "2s/\"id\": *\"[^\"]*\"/\"id\": \"\"/" workloads/fidelity/items.jsonl &&
	expect_exit 2 warden lint &&
	expect_grep "^workloads/fidelity/items.jsonl:2: .id. must be a non-empty string$" out &&
	bench_policy . "cycle.fidelity=false" &&
	expect_exit 0 warden lint &&
	expect_grep "^5 files checked, 0 problems$" err &&
	git checkout -q workloads/fidelity/items.jsonl policy/warden.json
'

test_expect_success 'lint names file, line, column and field of a wrong type' '
	cd bench &&
	sed "s/\"completion_min\": 90/\"completion_min\": \"90\"/" policy/warden.json >p &&
	mv p policy/warden.json &&
	expect_exit 1 warden lint &&
	expect_grep "^policy/warden.json:[0-9]*:[0-9]*: .gates.completion_min. must be an integer$" out &&
	git checkout -q policy/warden.json
'

test_expect_success 'lint reports an unknown key, a missing field and a bad placeholder together' '
	cd bench &&
	cat >adapters/engines/broken.json <<-\EOF2 &&
	{
	  "schema": 1,
	  "name": "broken",
	  "api": "openai-chat",
	  "sorce": { "kind": "none" },
	  "serve": { "argv": ["srv", "--port", "{prot}"], "health": "/health" }
	}
	EOF2
	expect_exit 1 warden lint &&
	cat >expect <<-\EOF2 &&
	adapters/engines/broken.json:5:3: '"'"'sorce'"'"' is not a known field
	adapters/engines/broken.json:6:40: '"'"'serve.argv[2]'"'"' has unknown placeholder '"'"'{prot}'"'"'
	adapters/engines/broken.json:1:1: '"'"'source'"'"' is required
	EOF2
	expect_equal expect out &&
	rm adapters/engines/broken.json
'

test_expect_success 'lint reports invalid JSON with jansson line and column (exit 2)' '
	cd bench &&
	printf "{\n  \"schema\": 1,\n  \"name\": \"qwen3-0.6b\",\n}\n" >adapters/profiles/qwen3-0.6b.json &&
	expect_exit 2 warden lint &&
	expect_grep "^adapters/profiles/qwen3-0.6b.json:4:1: invalid JSON: " out &&
	git checkout -q adapters/profiles/qwen3-0.6b.json
'

test_expect_success 'lint catches a roster engine without an adapter' '
	cd bench &&
	python3 - <<-\EOF2 &&
	import json
	p = json.load(open("policy/warden.json"))
	p["rosters"]["example"].append("ghost")
	json.dump(p, open("policy/warden.json", "w"), indent=2)
	EOF2
	expect_exit 1 warden lint &&
	expect_grep "rosters.example. names engine .ghost., but adapters/engines/ghost.json does not exist" out &&
	git checkout -q policy/warden.json
'

test_expect_success 'lint catches an adapter whose name is not its file name' '
	cd bench &&
	cp adapters/engines/example-sim.json adapters/engines/other.json &&
	expect_exit 1 warden lint adapters/engines/other.json &&
	expect_grep "^adapters/engines/other.json:3:[0-9]*: .name. is .example-sim. but the file is named .other.json.$" out &&
	rm adapters/engines/other.json
'

test_expect_success 'lint --json lists problems as an array' '
	cd bench &&
	printf "{\"schema\": 2}" >adapters/profiles/bad.json &&
	expect_exit 1 warden --json lint adapters/profiles/bad.json &&
	python3 -c "
import json
d = json.load(open(\"out\"))
fields = [p[\"field\"] for p in d[\"problems\"]]
assert \"schema\" in fields and \"name\" in fields and \"engines\" in fields, fields
assert all(p[\"file\"] == \"adapters/profiles/bad.json\" for p in d[\"problems\"])
" && rm adapters/profiles/bad.json
'

test_expect_success 'lint of a file that is none of the three kinds exits 2' '
	echo "{}" >stray.json &&
	expect_exit 2 warden lint stray.json &&
	expect_grep "is not a policy, adapter, profile or workload" out
'

test_expect_success 'lint reports a policy that is not JSON (exit 2)' '
	cd bench &&
	echo "{" >policy/warden.json &&
	expect_exit 2 warden lint &&
	expect_grep "^policy/warden.json:2: invalid JSON" out &&
	git checkout -q policy/warden.json
'

test_done
