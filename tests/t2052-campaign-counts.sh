#!/bin/sh
# t2052: the campaign report says what its figures rest on: a sweep whose
# warmups failed says how many of them succeeded; a p99 over fewer than
# 100 samples is marked, with a note; --limit beyond a split's size is
# named with the split and its size, and recorded with the run.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

test_expect_success 'a bench of an engine that answers and one that fails every request' '
	bench_init bench &&
	sim_adapter bench simok --schedule continuous --itl 1 \
	    --prefill-rate 50000 &&
	sim_adapter bench simfail --schedule continuous --itl 1 \
	    --prefill-rate 50000 --fail-rate 1 &&
	bench_policy bench "campaign.concurrency=[4]"
'

test_expect_success '--limit 200 on a split of 100 is said, naming the split and its size' '
	(cd bench && expect_exit 0 warden campaign --engine simok --limit 200 \
	    --run-id big && cp out ../big.out) &&
	expect_grep "^warning: --limit 200, but split .chat. has 100 timed prompts: its sweeps ran 100$" big.out &&
	expect_grep "^simok  *4 .* 100/100  *ok$" big.out
'

test_expect_success 'and recorded with the run: campaign show says it again' '
	(cd bench && warden --json campaign show big) >big.json &&
	python3 -c "
import json; d = json.load(open(\"big.json\"))
assert d[\"limit\"] == 200, d[\"limit\"]
assert d[\"limit_beyond\"] == [{\"split\": \"chat\", \"prompts\": 100}], d[\"limit_beyond\"]" &&
	(cd bench && warden campaign show big) >big.show &&
	expect_grep "^warning: --limit 200, but split .chat. has 100 timed prompts" big.show
'

test_expect_success 'a limit within the split says nothing of it' '
	(cd bench && expect_exit 0 warden campaign --engine simok --limit 8 \
	    --run-id small && cp out ../small.out) &&
	expect_no_grep "^warning: --limit" small.out &&
	(cd bench && warden --json campaign show small) >small.json &&
	python3 -c "
import json; assert json.load(open(\"small.json\"))[\"limit_beyond\"] == []"
'

test_expect_success 'a p99 over 100 samples is plain; over 8 it is marked, with the note' '
	expect_no_grep "\*" big.out &&
	expect_grep "^simok  *4 .*[0-9]\* .*[0-9]\*$" small.out &&
	expect_grep "^\* p99 of fewer than 100 samples" small.out &&
	python3 -c "
import json; r = json.load(open(\"small.json\"))[\"tables\"][0][\"rows\"][0]
assert r[\"ttft_samples\"] == 8 and r[\"e2el_samples\"] == 8, r"
'

test_expect_success 'warmups that failed are shown under the row: 0 of 3' '
	(cd bench && expect_exit 0 warden campaign --engine simfail --limit 8 \
	    --run-id fail && cp out ../fail.out) &&
	expect_grep "^simfail  *4 .* 0/8  *all-failed$" fail.out &&
	expect_grep "^  warmups: 0 of 3 succeeded$" fail.out &&
	expect_no_grep "warmups:" small.out &&
	(cd bench && warden campaign show fail --csv) >fail.csv &&
	head -1 fail.csv | grep -q ",total,warmups_ok,warmups_failed,ttft_samples,e2el_samples," &&
	sed -n 2p fail.csv | grep -q ",all-failed,complete,0,8,0,3,0,0,"
'

test_done
