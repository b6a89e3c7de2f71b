#!/bin/sh
# t7004: `warden merge` combines snapshots of shards measured apart into
# one verified snapshot, and refuses mismatched inputs (policy, workload,
# commit) and overlapping cells, naming them.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/results/lib-results.sh"

# shard DIR ENGINE: clone the bench, measure ENGINE, snapshot to DIR.tar.gz
shard() {
	git clone -q bench "$1" &&
	warden --repo "$1" campaign --engine "$2" --limit 4 --run-id "$1" \
	    >/dev/null &&
	warden --repo "$1" snapshot --output "$1.tar.gz" >/dev/null
}

test_expect_success 'a bench of two engines, measured as two shards' '
	results_bench bench &&
	fid_adapter bench sima --accuracy 1 &&
	fid_adapter bench simb --accuracy 1 &&
	bench_policy bench "campaign.concurrency=[1, 4]" &&
	commit_all bench engines &&
	shard a sima && shard b simb
'

test_expect_success 'merge combines the shards into one snapshot that verifies' '
	expect_exit 0 warden --repo bench merge --output m.tar.gz --tree mt \
	    a.tar.gz b.tar.gz &&
	expect_grep "^snapshot [0-9a-f]\{16\}$" out &&
	expect_exit 0 warden verify m.tar.gz &&
	test -f mt/results/qwen3-0.6b/chat/sima_a.json &&
	test -f mt/results/qwen3-0.6b/chat/simb_b.json &&
	expect_grep "^| sima | 4 | " mt/results/REPORT.md &&
	expect_grep "^| simb | 4 | " mt/results/REPORT.md &&
	jcheck mt/results/manifest.json \
	    "[p[\"path\"] for p in o[\"merged_from\"]] == [\"a.tar.gz\", \"b.tar.gz\"]" \
	    "o[\"runs\"][\"campaign\"] == [\"a\", \"b\"]" \
	    "o[\"commit\"] == \"$(git -C bench rev-parse HEAD)\"" &&
	warden --repo bench merge --output m2.tar.gz a.tar.gz b.tar.gz >/dev/null &&
	cmp m.tar.gz m2.tar.gz
'

test_expect_success 'the gate judges a merged snapshot' '
	expect_exit 0 warden --repo bench gate --snapshot m.tar.gz &&
	expect_grep "^gate over results [0-9a-f]\{16\}: campaign a, b; " out &&
	expect_grep "^sima  *✓ " out && expect_grep "^simb  *✓ " out
'

test_expect_success 'overlapping cells are refused, naming the cell' '
	shard c sima &&
	expect_exit 1 warden --repo bench merge --output x.tar.gz a.tar.gz c.tar.gz &&
	expect_grep "overlapping campaign cell sima/qwen3-0.6b/chat/c1 on machine [0-9a-f]*: in .results/qwen3-0.6b/chat/sima_a.json. and .results/qwen3-0.6b/chat/sima_c.json." err &&
	expect_exit 1 warden --repo bench merge --output x.tar.gz a.tar.gz a.tar.gz &&
	expect_grep "overlapping runs: a.tar.gz: .results/qwen3-0.6b/chat/sima_a.json. is already in the result set" err &&
	test ! -e x.tar.gz
'

test_expect_success 'a different policy is refused, naming the file and both parts' '
	git clone -q bench p &&
	bench_policy p "caps.request_timeout_s=20" && commit_all p "other policy" &&
	warden --repo p campaign --engine simb --limit 4 --run-id p >/dev/null &&
	warden --repo p snapshot --output p.tar.gz >/dev/null &&
	expect_exit 1 warden --repo bench merge --output x.tar.gz a.tar.gz p.tar.gz &&
	expect_grep "mismatched inputs: .policy/warden.json. has sha256 [0-9a-f]\{12\} in a.tar.gz and [0-9a-f]\{12\} in p.tar.gz" err
'

test_expect_success 'a different workload is refused, naming it' '
	git clone -q bench w &&
	sed -i "1d" w/workloads/chat.jsonl && commit_all w "other workload" &&
	warden --repo w campaign --engine simb --limit 4 --run-id w >/dev/null &&
	warden --repo w snapshot --output w.tar.gz >/dev/null &&
	expect_exit 1 warden --repo bench merge --output x.tar.gz a.tar.gz w.tar.gz &&
	expect_grep "mismatched inputs: .workloads/chat.jsonl. has sha256" err
'

test_expect_success 'another commit with the same inputs is refused' '
	git clone -q bench k &&
	git -C k commit -q --allow-empty -m "nothing" &&
	warden --repo k campaign --engine simb --limit 4 --run-id k >/dev/null &&
	warden --repo k snapshot --output k.tar.gz >/dev/null &&
	expect_exit 1 warden --repo bench merge --output x.tar.gz a.tar.gz k.tar.gz &&
	expect_grep "mismatched inputs: a.tar.gz measured commit [0-9a-f]\{12\}, k.tar.gz commit [0-9a-f]\{12\}" err
'

test_expect_success 'a part that does not verify is refused; one part is a usage error' '
	python3 $TOP_SRCDIR/tests/fixtures/results/tamper.py b.tar.gz bad.tar.gz \
	    change results/REPORT.md &&
	expect_exit 1 warden --repo bench merge --output x.tar.gz a.tar.gz bad.tar.gz &&
	expect_grep "bad.tar.gz does not verify: changed member results/REPORT.md" err &&
	expect_exit 2 warden --repo bench merge a.tar.gz &&
	expect_grep "usage: warden merge" err
'

# refshard DIR ENGINE REF: a shard that imported the fidelity reference REF
# (a shared input of the fleet) and measured ENGINE, snapshot without its
# own fidelity run.
refshard() {
	git clone -q bench "$1" &&
	warden --repo "$1" fidelity import-reference --engine vllm-a100 \
	    --run-id ref1 "$3" >/dev/null &&
	warden --repo "$1" campaign --engine "$2" --limit 4 --run-id "$1" \
	    >/dev/null &&
	warden --repo "$1" snapshot --no-fidelity --output "$1.tar.gz" >/dev/null
}

test_expect_success 'shards carrying the same reference merge, with the reference once; a different one is refused' '
	gold_reference bench ref.jsonl 0 &&
	refshard r1 sima ref.jsonl && refshard r2 simb ref.jsonl &&
	expect_exit 0 warden --repo bench merge --output rm.tar.gz --tree rt \
	    r1.tar.gz r2.tar.gz &&
	expect_exit 0 warden verify rm.tar.gz &&
	test "$(find rt/results/fidelity -name "*.json" | wc -l)" = 1 &&
	test -f rt/results/qwen3-0.6b/chat/sima_r1.json &&
	test -f rt/results/qwen3-0.6b/chat/simb_r2.json &&
	sed "s/\"answer\": \"[a-z_]*\"/\"answer\": \"none\"/" ref.jsonl >other-ref.jsonl &&
	refshard r3 simb other-ref.jsonl &&
	expect_exit 1 warden --repo bench merge --output x.tar.gz r1.tar.gz r3.tar.gz &&
	expect_grep "overlapping runs: r3.tar.gz: .results/fidelity/reference/" err &&
	test ! -e x.tar.gz
'

test_done
