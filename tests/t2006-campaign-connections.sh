#!/bin/sh
# t2006: the c connections are open before the timed loop starts, so no
# timed request pays for a TCP connect to a freshly started server, and
# every request row records its connect time (libcurl's
# CURLINFO_CONNECT_TIME_T) so a TTFT can be split into connect and wait.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

q() {
	sqlite3 bench/.warden/warden.db "$1"
}

test_expect_success 'a campaign at c=1 and c=16' '
	bench_init bench &&
	sim_adapter bench simc --schedule continuous --itl 2 --prefill-rate 50000 &&
	bench_policy bench "campaign.concurrency=[1, 16]" &&
	(cd bench && expect_exit 0 warden campaign --limit 32 --run-id c1)
'

test_expect_success 'every request row records its connect time' '
	test "$(q "select count(*) from campaign_requests where connect_ms is null")" = 0 &&
	test "$(q "select count(*) from campaign_requests where connect_ms < 0")" = 0 &&
	test "$(q "select count(*) from campaign_requests where outcome = '"'"'ok'"'"' and ttft_ms < connect_ms")" = 0
'

test_expect_success 'no timed request opens a connection: all c were open before the loop' '
	q "select s.concurrency, count(*), sum(r.new_connection) from campaign_requests r join campaign_sweeps s on s.id = r.sweep_id where r.warmup = 0 group by s.concurrency order by s.concurrency" >conns &&
	cat conns &&
	printf "1|32|0\n16|32|0\n" >want &&
	expect_equal want conns
'

test_expect_success 'the sweep records how many connections it opened before the loop' '
	test "$(q "select json_extract(summary, '"'"'$.preconnected'"'"') from campaign_sweeps where concurrency = 16")" = 16 &&
	test "$(q "select json_extract(summary, '"'"'$.preconnected'"'"') from campaign_sweeps where concurrency = 1")" = 1
'

test_expect_success 'warmups that opened their connection show a connect time' '
	test "$(q "select count(*) from campaign_requests where warmup = 1 and new_connection = 1")" -ge 2
'

test_expect_success 'the protocol says so in doc/campaign.md and the man page' '
	grep -q "opens the c connections" "$TOP_SRCDIR/doc/campaign.md" &&
	grep -q "opens the c connections" "$TOP_SRCDIR/doc/warden-campaign.1.md" &&
	grep -q "connect_ms" "$TOP_SRCDIR/doc/campaign.md"
'

test_done
