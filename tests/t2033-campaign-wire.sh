#!/bin/sh
# t2033: the wire behaviours of the real engines, played by warden-simengine,
# each in a campaign: keep-alive then close (llama-server), Connection: close
# (mlx_lm), a connection closed before any byte, an error inside a 200
# stream as vLLM and as older llama-server write it, and the role-only first
# chunk with a final usage chunk whose choices are empty (a stream is the
# role chunk, the tokens, the finish chunk and the usage chunk). What must hold: a
# request is the engine's failure only if the engine could have seen it, the
# engine never receives a request twice, and connection-level retries are
# counted apart from outcomes. The list and its sources: doc/testing.md,
# "What the simulated engine reproduces".
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

TRACE='{log_dir}/trace-{split}-c{concurrency}.jsonl'

q() {
	sqlite3 bench/.warden/warden.db "$1"
}

# sweep_json ENGINE C FIELD: a field of the sweep's summary
sweep_json() {
	q "select json_extract(summary, '\$.$3') from campaign_sweeps where engine = '$1' and concurrency = $2"
}

# trace_ids ENGINE C [FAULT]: the timed request ids in the engine's trace
# (warden names them RUN-sSWEEP-INDEX, warmups RUN-sSWEEP-wINDEX), one a
# line, with the given fault only, or with any fault but "closed"
trace_ids() {
	python3 - "bench/.warden/logs/w1/$1/qwen3-0.6b/trace-chat-c$2.jsonl" "${3:-}" <<'PY'
import json, re, sys
path, fault = sys.argv[1], sys.argv[2]
for line in open(path):
    t = json.loads(line)
    rid = t.get("request_id") or ""
    if not re.match(r"^w1-s[0-9]+-[0-9]+$", rid):
        continue
    if fault and t["fault"] != fault:
        continue
    if not fault and t["fault"] == "closed":
        continue
    print(rid)
PY
}

test_expect_success 'a bench of engines with the connection and stream habits of real ones' '
	bench_init bench &&
	common="--schedule continuous --itl 1 --prefill-rate 50000 --trace $TRACE" &&
	sim_adapter bench simllama $common --keepalive-close --close-delay 200 &&
	sim_adapter bench simmlx $common --connection-close &&
	sim_adapter bench simdrop $common --connection-close --close-rate 0.25 &&
	sim_adapter bench simvllmerr $common --error-event-rate 0.25 \
	    --error-form data-done &&
	sim_adapter bench simllamaerr $common --error-event-rate 0.25 \
	    --error-form field &&
	bench_policy bench "campaign.concurrency=[1, 4]"
'

test_expect_success 'the campaign runs every engine to the end of its grid' '
	(cd bench && expect_exit 0 warden campaign --limit 16 --run-id w1 &&
	 cp out ../wire.out) &&
	cat wire.out &&
	# every sweep complete: a status, and no outcome line under a row
	expect_no_grep "^  outcome " wire.out &&
	for e in simllama simmlx simdrop simvllmerr simllamaerr; do
		expect_grep "^$e  *1 .*/16  *[a-z-]*$" wire.out &&
		expect_grep "^$e  *4 .*/16  *[a-z-]*$" wire.out || return 1
	done
'

test_expect_success 'keep-alive then close: no request fails, the engine got each once' '
	expect_grep "^simllama  *1 .* 16/16  *ok$" wire.out &&
	expect_grep "^simllama  *4 .* 16/16  *ok$" wire.out &&
	for c in 1 4; do
		trace_ids simllama $c | sort >ids &&
		test "$(wc -l <ids)" = 16 &&
		test "$(sort -u ids | wc -l)" = 16 || return 1
	done
'

test_expect_success 'keep-alive then close: the server closing under warden stops connection reuse, and the retries are counted apart' '
	for c in 1 4; do
		test "$(sweep_json simllama $c connection_reuse_stopped)" = 1 &&
		test "$(sweep_json simllama $c failed)" = 0 &&
		test "$(sweep_json simllama $c connection_retries)" -ge 1 || return 1
	done
'

test_expect_success 'keep-alive then close: the table says so under the row' '
	test "$(grep -c "the engine closed kept-alive connections before answering: [1-9][0-9]* connection$" wire.out)" = 2 &&
	test "$(grep -c "^  retries, not its failures; each request then opened its own connection$" wire.out)" = 2
'

test_expect_success 'keep-alive then close: connects are measured beside TTFT' '
	for c in 1 4; do
		test "$(sweep_json simllama $c new_connections)" -ge 1 &&
		test "$(sweep_json simllama $c connect_samples)" -ge 1 &&
		test -n "$(sweep_json simllama $c p99_connect_ms)" || return 1
	done
'

test_expect_success 'Connection: close: every request opens its own connection, none fails, none is retried' '
	expect_grep "^simmlx  *1 .* 16/16  *ok$" wire.out &&
	expect_grep "^simmlx  *4 .* 16/16  *ok$" wire.out &&
	test "$(q "select count(*) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'simmlx'"'"' and r.warmup = 0 and r.new_connection = 1")" = 32 &&
	test "$(sweep_json simmlx 1 connection_retries)" = 0 &&
	test "$(sweep_json simmlx 4 connection_retries)" = 0 &&
	test "$(sweep_json simmlx 4 connection_reuse_stopped)" = 0
'

test_expect_success 'a connection closed before any byte is the engine failure, once, never sent again' '
	for c in 1 4; do
		trace_ids simdrop $c closed | sort >closed &&
		q "select s.run_id || '"'"'-s'"'"' || s.id || '"'"'-'"'"' || r.idx from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'simdrop'"'"' and s.concurrency = $c and r.warmup = 0 and r.outcome <> '"'"'ok'"'"'" | sort >failed &&
		echo "c=$c: $(wc -l <closed) closed" &&
		expect_equal closed failed &&
		test "$(sweep_json simdrop $c connection_retries)" = 0 &&
		trace_ids simdrop $c "" | sort >answered &&
		test -z "$(comm -12 closed answered)" &&
		test "$(sort -u answered | wc -l)" = "$(wc -l <answered)" || return 1
	done &&
	test "$(q "select count(*) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'simdrop'"'"' and r.warmup = 0 and r.outcome <> '"'"'ok'"'"'")" -ge 1 &&
	test "$(q "select count(*) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'simdrop'"'"' and r.warmup = 0 and r.outcome <> '"'"'ok'"'"' and r.error not like '"'"'no response%'"'"'")" = 0
'

# error_rows ENGINE C: the timed requests warden failed with stream_error
error_rows() {
	q "select s.run_id || '-s' || s.id || '-' || r.idx from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '$1' and s.concurrency = $2 and r.warmup = 0 and r.outcome = 'stream_error'" | sort
}

test_expect_success 'an error inside a 200 stream, then [DONE] (vLLM), fails exactly those requests' '
	for c in 1 4; do
		trace_ids simvllmerr $c error_event | sort >sent &&
		error_rows simvllmerr $c >seen &&
		echo "c=$c: $(wc -l <sent) errors" &&
		expect_equal sent seen || return 1
	done &&
	test "$(q "select count(*) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'simvllmerr'"'"' and r.outcome = '"'"'stream_error'"'"'")" -ge 1
'

test_expect_success 'an "error:" line, then [DONE] (older llama-server), fails exactly those requests' '
	for c in 1 4; do
		trace_ids simllamaerr $c error_event | sort >sent &&
		error_rows simllamaerr $c >seen &&
		expect_equal sent seen || return 1
	done &&
	test "$(q "select count(*) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'simllamaerr'"'"' and r.outcome = '"'"'stream_error'"'"' and r.error like '"'"'error event%'"'"'")" -ge 1
'

test_expect_success 'the role-only first chunk is no token, the usage chunk with empty choices gives the count' '
	test "$(q "select count(*) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'simllama'"'"' and r.outcome = '"'"'ok'"'"' and (r.usage_source <> '"'"'server'"'"' or r.completion_tokens <> r.token_events or r.chunks <> r.token_events + 3)")" = 0 &&
	test "$(q "select count(*) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'simllama'"'"' and r.outcome = '"'"'ok'"'"'")" -ge 32
'

test_expect_success 'the docs list the behaviours with their sources and say whether connect is in TTFT' '
	expect_grep "What the simulated engine reproduces" "$TOP_SRCDIR/doc/testing.md" &&
	expect_grep "connection_retries" "$TOP_SRCDIR/doc/campaign.md" &&
	expect_grep "connection\\\\_retries" "$TOP_SRCDIR/doc/warden-campaign.1.md" &&
	expect_grep "TTFT includes" "$TOP_SRCDIR/doc/campaign.md" &&
	expect_grep "keepalive-close" "$TOP_SRCDIR/tests/simengine/warden-simengine.md"
'

test_done
