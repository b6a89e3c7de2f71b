#!/bin/sh
# t2034: every read of what an engine sends is bounded (README, "Bounds on
# what an engine sends"). Against engines that answer too much
# (tests/fixtures/engines/hostile-engine.py): a /health and a /v1/models
# of 256 MiB end the engine's start as its failure, with the bound in the
# detail; a stream of 256 MiB of valid token events makes each request
# `overlong`, cut at its token bound with what is stored per request
# bounded too; header lines or 1xx answers sent forever, or a body that
# trickles, end each request at its deadline (`timeout`), or as a bad
# answer once the head passes its bound.
# warden's peak resident memory stays far below what was sent: before the
# bounds it was 276 MiB for the /health, 4.5 GiB for the /v1/models and
# 210 MiB for the token events; with them, about 20 MB each.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

if ! test -r /proc/self/status; then
	echo "1..0 # SKIP no /proc/PID/status to read the peak memory from"
	rm -rf "$TEST_DIR"
	exit 0
fi

# A generous bound, far above warden's own needs (about 20 MB, 60 MB
# under ASan) and far below the 256 MiB each hostile engine sends.
MAX_KB=204800

q() {
	sqlite3 bench/.warden/warden.db "$1"
}

# run_engine NAME: a campaign of that engine alone, its peak memory in
# ./hwm-NAME; the campaign's exit status is not asserted here
run_engine() {
	(cd bench && peak_rss "../hwm-$1" "$WARDEN" campaign --engine "$1" \
	    --limit 2 --run-id "$1" ; cp out "../out-$1"; cp err "../err-$1") &&
	echo "$1: warden peak resident: $(cat "hwm-$1") kB"
}

below_bound() {
	test "$(cat "hwm-$1")" -gt 0 && test "$(cat "hwm-$1")" -lt "$MAX_KB"
}

test_expect_success 'a bench of engines that answer too much' '
	bench_init bench &&
	hostile_adapter bench hhealth --huge-health 256 &&
	hostile_adapter bench hmodels --huge-models 256 &&
	hostile_adapter bench htokens --endless-tokens 256 &&
	hostile_adapter bench hheaders --endless-headers 100 &&
	hostile_adapter bench hheadflood --endless-headers 0 &&
	hostile_adapter bench h1xx --endless-1xx 100 &&
	hostile_adapter bench htrickle --trickle 100 &&
	hostile_adapter bench hok &&
	bench_policy bench "campaign.concurrency=[1]" "caps.warmups=1" \
	    "caps.request_timeout_s=3" "caps.hang_s=60" &&
	(cd bench && warden lint)
'

test_expect_success 'a /health of 256 MiB: not_ready, the bound named, memory bounded' '
	run_engine hhealth &&
	test "$(q "select outcome from campaign_sweeps where engine = '"'"'hhealth'"'"'")" = not_ready &&
	q "select detail from campaign_sweeps where engine = '"'"'hhealth'"'"'" >why &&
	expect_grep "answered more than 65536 bytes" why &&
	below_bound hhealth
'

test_expect_success 'a /v1/models of 256 MiB: wrong_model, the bound named, memory bounded' '
	run_engine hmodels &&
	test "$(q "select outcome from campaign_sweeps where engine = '"'"'hmodels'"'"'")" = wrong_model &&
	q "select detail from campaign_sweeps where engine = '"'"'hmodels'"'"'" >why &&
	expect_grep "answered more than 65536 bytes" why &&
	below_bound hmodels
'

test_expect_success '256 MiB of token events: every request overlong, memory bounded' '
	run_engine htokens &&
	test "$(q "select outcome from campaign_sweeps where engine = '"'"'htokens'"'"'")" = complete &&
	test "$(q "select json_extract(summary, '"'"'\$.failed_by_class.overlong'"'"') from campaign_sweeps where engine = '"'"'htokens'"'"'")" = 2 &&
	test "$(q "select count(*) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'htokens'"'"' and r.outcome = '"'"'overlong'"'"'")" = 3 &&
	q "select distinct error from campaign_requests where outcome = '"'"'overlong'"'"'" >why &&
	cat why &&
	expect_grep "token events, more than max_tokens" why &&
	below_bound htokens
'

# max(2 * max_tokens, max_tokens + 64) events for the chat prompts' 64
# and 256: the gaps stored are one fewer than the events kept
test_expect_success 'what is stored of an overlong request is bounded by its max_tokens' '
	test "$(q "select max(token_events) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'htokens'"'"'")" -le 512 &&
	test "$(q "select max(json_array_length(itl_ns)) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'htokens'"'"'")" -le 511 &&
	test "$(q "select max(length(itl_ns)) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'htokens'"'"'")" -lt 16384
'

test_expect_success 'header lines forever, slowly: each request ends at its deadline as timeout' '
	run_engine hheaders &&
	test "$(q "select outcome from campaign_sweeps where engine = '"'"'hheaders'"'"'")" = complete &&
	test "$(q "select count(*) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'hheaders'"'"' and r.outcome = '"'"'timeout'"'"'")" = 3 &&
	test "$(q "select count(*) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'hheaders'"'"'")" = 3 &&
	below_bound hheaders
'

test_expect_success 'header lines forever, at once: each request ends as a bad answer at the head bound' '
	run_engine hheadflood &&
	test "$(q "select outcome from campaign_sweeps where engine = '"'"'hheadflood'"'"'")" = complete &&
	test "$(q "select count(*) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'hheadflood'"'"' and r.outcome = '"'"'stream_error'"'"' and r.error like '"'"'%the head passed 65536 bytes%'"'"'")" = 3 &&
	below_bound hheadflood
'

test_expect_success '1xx answers forever, or a body that trickles: each request ends at its deadline' '
	run_engine h1xx &&
	run_engine htrickle &&
	for e in h1xx htrickle; do
		test "$(q "select outcome from campaign_sweeps where engine = '"'"'$e'"'"'")" = complete &&
		test "$(q "select count(*) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'$e'"'"' and r.outcome = '"'"'timeout'"'"'")" = 3 &&
		test "$(q "select count(*) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where s.engine = '"'"'$e'"'"'")" = 3 &&
		below_bound $e || return 1
	done
'

test_expect_success 'an engine that answers as asked is unaffected' '
	run_engine hok &&
	test "$(q "select completed from campaign_sweeps where engine = '"'"'hok'"'"'")" = 2
'

test_done
