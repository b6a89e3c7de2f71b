#!/bin/sh
# t2001: `warden campaign` runs the grid against simulated engines and
# prints its table (t2005 checks each column); continuous batching scales, serial does not;
# every request is a row; runs never touch each other.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

# Replies of 16 tokens at 4 ms (64 ms a request): the serial engine's
# sweeps are 32 requests one after the other.
test_expect_success 'a bench with a continuous and a serial engine' '
	bench_init bench &&
	sim_adapter bench simcont --schedule continuous --max-batch 16 \
	    --itl 4 --itl-growth 0 --prefill-rate 0 --output-tokens 16 \
	    --trace "{log_dir}/trace-{split}-c{concurrency}.jsonl" &&
	sim_adapter bench simserial --schedule serial --itl 4 --prefill-rate 0 \
	    --output-tokens 16 \
	    --trace "{log_dir}/trace-{split}-c{concurrency}.jsonl" &&
	(cd bench && warden lint)
'

test_expect_success 'campaign prints a table per model and split' '
	cd bench &&
	expect_exit 0 warden campaign --limit 32 --run-id t1 &&
	cp out ../table.out && cp err ../progress.err &&
	expect_grep "^campaign run t1 " out &&
	expect_grep "^qwen3-0.6b / chat$" out &&
	expect_grep "^engine  *c  *req/s  *out tok/s  *mean  *p50  *p99  *mean  *p99$" out &&
	expect_grep "^engine  *c  *TPOT  *ITL  *engine  *system  *completed  *status$" out &&
	expect_grep "^simcont  *1 .* 32/32  *ok$" out &&
	expect_grep "^simcont  *16 .* 32/32  *ok$" out &&
	expect_grep "^simserial  *16 .* 32/32  *ok$" out
'

test_expect_success 'continuous scales c1 to c16 by more than 2x, serial does not' '
	sed -n "s/^scaling c16\/c1 simcont: \([0-9.]*\)x$/\1/p" table.out >cont &&
	sed -n "s/^scaling c16\/c1 simserial: \([0-9.]*\)x$/\1/p" table.out >ser &&
	test -s cont && test -s ser &&
	python3 -c "import sys; c=float(open(\"cont\").read()); s=float(open(\"ser\").read()); print(c, s); sys.exit(0 if c > 2 and s < 1.3 else 1)"
'

test_expect_success 'not on a terminal: one plain line as each sweep starts and ends' '
	test $(grep -c "^sweep [1-4]/4 .*: starting" progress.err) -eq 4 &&
	test $(grep -c "^sweep [1-4]/4 .*: complete, " progress.err) -eq 4 &&
	expect_grep "^sweep 2/4 simcont qwen3-0.6b chat c=16: complete, 32/32 ok" progress.err
'

test_expect_success 'every request and warmup is a row, written once' '
	cd bench &&
	test "$(sqlite3 .warden/warden.db "select count(*) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.run_id = '"'"'t1'"'"' and warmup = 0")" = 128 &&
	test "$(sqlite3 .warden/warden.db "select count(*) from campaign_requests where warmup = 1")" = 12 &&
	test "$(sqlite3 .warden/warden.db "select count(*) from campaign_requests where outcome <> '"'"'ok'"'"'")" = 0 &&
	test "$(sqlite3 .warden/warden.db "select count(*) from campaign_memory")" -ge 4 &&
	test "$(sqlite3 .warden/warden.db "pragma integrity_check")" = ok
'

test_expect_success 'warmups are drawn from outside the timed set' '
	cd bench &&
	sqlite3 .warden/warden.db "select distinct prompt_id from campaign_requests where warmup = 1" >warm &&
	test "$(cat warm | tr "\n" " ")" = "chat-w0 chat-w1 chat-w2 " &&
	sqlite3 .warden/warden.db "select prompt_id from campaign_requests where warmup = 0 and sweep_id = 1 order by idx limit 2" >timed &&
	test "$(cat timed | tr "\n" " ")" = "chat-000 chat-001 "
'

test_expect_success 'each sweep has provenance and its journal entries' '
	cd bench &&
	sqlite3 .warden/warden.db "select provenance from campaign_sweeps where seq = 0" >prov &&
	expect_grep "\"adapter_sha256\":\"[0-9a-f]\{64\}\"" prov &&
	expect_grep "\"workload_sha256\":\"[0-9a-f]\{64\}\"" prov &&
	expect_grep "\"engine_argv\":\"warden-simengine --host 127.0.0.1 --port {port} --model Qwen/Qwen3-0.6B " prov &&
	! grep -q "$TEST_DIR" prov &&
	test -s "$(sqlite3 .warden/warden.db "select log_path from campaign_sweeps where seq = 0")" &&
	sqlite3 .warden/warden.db "select provenance from campaign_runs" >runprov &&
	expect_grep "\"warden_version\":" runprov &&
	expect_grep "\"repo_commit\":\"[0-9a-f]\{40\}\"" runprov &&
	expect_grep "\"os\":" runprov &&
	test "$(sqlite3 .warden/warden.db "select count(*) from journal where kind = '"'"'campaign.sweep.finish'"'"'")" = 4 &&
	warden journal verify
'

test_expect_success 'the served model is recorded' '
	cd bench &&
	test "$(sqlite3 .warden/warden.db "select distinct served_model from campaign_sweeps")" = Qwen/Qwen3-0.6B
'

test_expect_success 'no engine process is left running' '
	! ps -eo args | grep -F "$TEST_DIR" | grep -v -e grep -e "ps -eo"
'

test_expect_success '--json prints the same results' '
	cd bench &&
	expect_exit 0 warden --json campaign --resume --run-id t1 &&
	python3 - out <<-PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["run_id"] == "t1" and d["state"] == "done"
	t = d["tables"][0]
	assert (t["model"], t["split"]) == ("qwen3-0.6b", "chat")
	rows = {(r["engine"], r["concurrency"]): r for r in t["rows"]}
	assert rows[("simcont", 16)]["completed"] == 32
	assert rows[("simcont", 16)]["output_throughput"] > 0
	assert rows[("simcont", 1)]["median_ttft_ms"] > 0
	sc = {s["engine"]: s["ratio"] for s in t["scaling"]}
	assert sc["simcont"] > 2 and sc["simserial"] < 1.3, sc
	PY
'

test_expect_success 'a run id cannot be reused, and a new run leaves the old one alone' '
	cd bench &&
	sqlite3 .warden/warden.db "select * from campaign_requests order by sweep_id, warmup, idx" | sha256sum >before &&
	expect_exit 2 warden campaign --limit 2 --run-id t1 &&
	expect_grep "run .t1. exists" err &&
	expect_exit 0 warden campaign --limit 2 --run-id t2 --engine simcont --concurrency 4 &&
	sqlite3 .warden/warden.db "select r.* from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.run_id = '"'"'t1'"'"' order by sweep_id, warmup, idx" | sha256sum >after &&
	expect_equal before after &&
	test -d .warden/logs/t1/simcont && test -d .warden/logs/t2/simcont
'

HAVE_PTY=no
if command -v script >/dev/null 2>&1 &&
    script -qec "sh -c 'test -t 2'" /dev/null >/dev/null 2>&1; then
	HAVE_PTY=yes
fi

test_expect_success_if $HAVE_PTY 'on a terminal, progress shows requests done, live tok/s and an ETA' '
	cd bench &&
	script -qec "stty cols 200; \"$WARDEN\" campaign --limit 24 --run-id tty1 --engine simserial --concurrency 1 >/dev/null" ../tty.out >/dev/null &&
	tr "\r" "\n" <../tty.out >../tty.lines &&
	expect_grep "sweep 1/1 (eta [0-9]* s, campaign eta [0-9]* s) simserial qwen3-0.6b chat c=1: measuring [0-9]*/24 requests, [0-9.]* tok/s" ../tty.lines &&
	expect_grep "sweep 1/1 simserial qwen3-0.6b chat c=1: complete, 24/24 ok" ../tty.lines
'

test_expect_success 'with server_per_level false one server serves every level' '
	bench_policy bench "campaign.server_per_level=false" &&
	cd bench &&
	expect_exit 0 warden campaign --limit 4 --run-id one --engine simcont --concurrency 1,2 &&
	expect_grep "^simcont  *2 .* 4/4  *ok$" out &&
	test $(ls .warden/logs/one/simcont/qwen3-0.6b/*.log | wc -l) -eq 1 &&
	test "$(sqlite3 .warden/warden.db "select count(distinct sweep_id) from campaign_memory m join campaign_sweeps s on s.id = m.sweep_id where s.run_id = '"'"'one'"'"'")" = 2
'

test_expect_success 'a filter that matches nothing is a usage error naming it' '
	cd bench &&
	expect_exit 2 warden campaign --engine nosuch &&
	expect_grep "engine .nosuch. is not in roster .test." err
'

test_expect_success 'a run id that is not a plain name is refused before anything runs' '
	cd bench &&
	before=$(sqlite3 .warden/warden.db "select count(*) from campaign_runs") &&
	for id in ../escape a/b .hidden -x "sp ace" "$(printf "cr\\rlf")" \
	    0123456789012345678901234567890123456789012345678901234567890123456789; do
		expect_exit 2 warden campaign --run-id "$id" --limit 1 &&
		expect_grep "run-id" err || return 1
	done &&
	test ! -e .warden/logs/escape &&
	test "$(sqlite3 .warden/warden.db "select count(*) from campaign_runs")" = "$before"
'

test_done
