#!/bin/sh
# t1004-simengine-memory: warden-simengine really holds the memory its
# serving model says - weights at start, KV per token per active request -
# and /proc sees it: unbounded gives it back, retain keeps it, bounded
# queues requests under the cap.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/simengine/lib-sim.sh"

# load_and_sample NAME [PROMPT]: 4 concurrent requests while sampling
# RSS; writes base, peak and final (kB) to NAME.base/.peak/.final. With
# WANT_KB set, sampling stops as soon as the peak is that far over the
# base (so that a slow sampler on a busy machine does not miss it).
load_and_sample() {
	_pid=$(sim_pid "$1")
	rss_kb "$_pid" >"$1.base"
	$SIMCLIENT fire "$(sim_port "$1")" 4 "$(user_body "${2:-w x y z}")" >"$1.fire" &
	_f=$!
	: >"$1.samples"
	while kill -0 "$_f" 2>/dev/null; do
		rss_kb "$_pid" >>"$1.samples"
		[ -z "${WANT_KB:-}" ] ||
		    [ "$(tail -1 "$1.samples")" -lt $(( $(cat "$1.base") + WANT_KB )) ] ||
		    break
		sleep 0.02
	done
	wait "$_f"
	grep -q "\"errors\": \[\]" "$1.fire"
	sort -n "$1.samples" | tail -1 >"$1.peak"
	rss_kb "$_pid" >"$1.final"
}

# wait_rss_below NAME KB: poll until the resident set is under KB (60 s).
wait_rss_below() {
	_i=0
	while [ "$(rss_kb "$(sim_pid "$1")")" -ge "$2" ]; do
		_i=$((_i + 1))
		[ "$_i" -lt 1200 ] || { echo "rss of $1 stayed at or over $2 kB"; return 1; }
		sleep 0.05
	done
}

KV="--itl 10 --output-tokens 30 --kv-bytes-per-token 524288"

# The memory of 4 requests held long enough that any sampler sees it:
# a 40-word prompt takes 40 x 256 kB = 10 MB of KV at admission, so 4
# requests hold 40 MB from the moment they are all in for 4 s of decode
# (3 requests hold less than 35 MB at their largest).
PROMPT="w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w"
KVLONG="--itl 1000 --output-tokens 4 --prefill-rate 0 --kv-bytes-per-token 262144"

test_expect_success_if "$(test -r /proc/self/status && echo yes)" \
    '--weights-mb 64 adds 64 MB to the resident set' '
	sim_start none --weights-mb 0 && sim_start w --weights-mb 64 &&
	a=$(rss_kb "$(sim_pid none)") && b=$(rss_kb "$(sim_pid w)") &&
	test $((b - a)) -ge 63000 &&
	sim_stop none && sim_stop w
'

test_expect_success_if "$(test -r /proc/self/status && echo yes)" \
    'unbounded KV grows with active requests and is given back' '
	sim_start u $KVLONG --mem-policy unbounded &&
	WANT_KB=35000 load_and_sample u "$PROMPT" &&
	test $(( $(cat u.peak) - $(cat u.base) )) -ge 35000 &&
	# given back: what stays is small next to the peak (allocator noise,
	# or a sanitizer quarantine, not KV)
	wait_rss_below u $(( $(cat u.base) + ($(cat u.peak) - $(cat u.base)) / 4 )) &&
	sim_stop u
'

test_expect_success_if "$(test -r /proc/self/status && echo yes)" \
    'retain keeps the peak after requests finish' '
	sim_start r $KVLONG --mem-policy retain &&
	load_and_sample r "$PROMPT" &&
	test $(( $(cat r.final) - $(cat r.base) )) -ge 35000 &&
	sim_stop r
'

test_expect_success_if "$(test -r /proc/self/status && echo yes)" \
    'bounded stays under the cap and serves requests one after another' '
	sim_start b $KV --mem-policy bounded --mem-cap-mb 20 --trace tr &&
	load_and_sample b &&
	test $(( $(cat b.peak) - $(cat b.base) )) -le 22000 &&
	sim_stop b &&
	# one at a time, on the model clock: each is admitted when the one
	# before has finished
	lines_check tr "len(o) == 4" "all(x[\"completion_tokens\"] == 30 for x in o)" \
	    "(lambda m: all(b[\"admit_ns\"] >= a[\"done_ns\"] for a, b in zip(m, m[1:])))(sorted((x[\"model\"] for x in o), key=lambda m: m[\"admit_ns\"]))"
'

sim_cleanup
test_done
