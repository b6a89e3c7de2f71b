#!/bin/sh
# t2051: an engine that announces keep-alive and closes the connection
# after each stream (llama-server): the first request put on a connection
# the server was closing is sent again on a new one, and from that moment
# no request is put on a kept-alive connection (doc/campaign.md). Only
# requests already on such a connection may be retried too: not one more
# for every request that ended while the retried one waited (which made
# every slot retry once, c retries a sweep).
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

q() {
	sqlite3 bench/.warden/warden.db "$1"
}

# sweep_json C FIELD: a field of the sweep's summary
sweep_json() {
	q "select json_extract(summary, '\$.$2') from campaign_sweeps where concurrency = $1"
}

# A serial engine answers one request at a time, so a retried request
# waits behind the others while they end on their connections; it closes
# each connection 20 ms after its stream.
test_expect_success 'a campaign against an engine that closes kept-alive connections' '
	bench_init bench &&
	sim_adapter bench simllama --schedule serial --itl 1 \
	    --prefill-rate 50000 --keepalive-close --close-delay 20 &&
	bench_policy bench "campaign.concurrency=[1, 8]" &&
	(cd bench && expect_exit 0 warden campaign --limit 32 --run-id r1)
'

test_expect_success 'every request completed; the closes were retried, not failed' '
	for c in 1 8; do
		test "$(sweep_json $c completed)" = 32 &&
		test "$(sweep_json $c failed)" = 0 &&
		test "$(sweep_json $c connection_reuse_stopped)" = 1 || return 1
	done
'

# At the first retry at c=8 at most the three connections the warmups
# streamed on (and those whose stream ended within the server's close
# delay) carry a request the server will not read; every later request
# opens its own connection. Before, reuse stopped only when the retried
# request ended, behind seven others: 8 retries.
test_expect_success 'reuse stops at the first retry: fewer retries than slots' '
	test "$(sweep_json 1 connection_retries)" = 1 &&
	n=$(sweep_json 8 connection_retries) &&
	echo "c=8: $n connection retries" &&
	test "$n" -ge 1 && test "$n" -lt 8
'

test_done
