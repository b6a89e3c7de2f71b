#!/bin/sh
# t8002: `warden campaign --shard K/N` splits the grid so that N machines
# cover it once: whole engines dealt out in grid order, the same split
# every time, recorded in the run's grid with the whole grid's digest, and
# every bad K/N refused before anything runs.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

# cells RUN: the run's cells as "engine model split c", in grid order.
cells() {
	sqlite3 .warden/warden.db "select engine || ' ' || model || ' ' || split || ' ' || concurrency from campaign_sweeps where run_id = '$1' order by seq"
}

# grid RUN FIELD: a field of the stored grid's shard, as JSON.
grid() {
	sqlite3 .warden/warden.db "select json_extract(grid, '\$.shard.$2') from campaign_runs where run_id = '$1'"
}

test_expect_success 'a bench of five simulated engines, two splits, two levels' '
	bench_init bench &&
	for e in e1 e2 e3 e4 e5; do
		sim_adapter bench $e --schedule continuous --itl 0 \
		    --prefill-rate 100000 || return 1
	done &&
	bench_policy bench "campaign.concurrency=[1, 2]" \
	    "campaign.splits=[\"chat\", \"agent\"]" "caps.warmups=0"
'

test_expect_success 'shards 1/2 and 2/2 cover the grid once, whole engines each' '
	cd bench &&
	"$WARDEN" campaign --shard 1/2 --limit 1 --run-id s1 >out1 2>err1 &&
	"$WARDEN" campaign --shard 2/2 --limit 1 --run-id s2 >out2 2>err2 &&
	cells s1 >c1 && cells s2 >c2 &&
	cut -d" " -f1 c1 | uniq >e1 && cut -d" " -f1 c2 | uniq >e2 &&
	printf "e1\ne3\ne5\n" >want1 && printf "e2\ne4\n" >want2 &&
	expect_equal want1 e1 && expect_equal want2 e2 &&
	test $(wc -l <c1) -eq 12 && test $(wc -l <c2) -eq 8 &&
	sort c1 c2 | uniq -d >twice && test ! -s twice &&
	test "$(grep -c " ok$" out1)" -gt 0
'

test_expect_success 'the run records its shard and the whole grid it is part of' '
	cd bench &&
	test "$(grid s1 index)/$(grid s1 count)" = 1/2 &&
	test "$(grid s2 index)/$(grid s2 count)" = 2/2 &&
	test "$(grid s1 unit)" = engine &&
	test "$(grid s1 engines)" = "[\"e1\",\"e3\",\"e5\"]" &&
	test "$(grid s2 grid_engines)" = "[\"e1\",\"e2\",\"e3\",\"e4\",\"e5\"]" &&
	test "$(grid s1 grid_points)" = 20 && test "$(grid s2 grid_points)" = 20 &&
	h=$(grid s1 grid_sha256) && test ${#h} -eq 64 &&
	test "$h" = "$(grid s2 grid_sha256)"
'

test_expect_success 'the same shard of the same grid is the same cells every time' '
	cd bench &&
	"$WARDEN" campaign --shard 2/2 --limit 1 --run-id s2again >/dev/null 2>&1 &&
	cells s2again >c2again && expect_equal c2 c2again
'

test_expect_success 'a shard of a filtered grid: another grid, another digest' '
	cd bench &&
	"$WARDEN" campaign --shard 2/3 --split chat --concurrency 1 --limit 1 \
	    --run-id f23 >/dev/null 2>&1 &&
	cells f23 >cf && printf "e2 qwen3-0.6b chat 1\ne5 qwen3-0.6b chat 1\n" >wantf &&
	expect_equal wantf cf &&
	test "$(grid f23 grid_points)" = 5 &&
	test "$(grid f23 grid_sha256)" != "$(grid s1 grid_sha256)"
'

test_expect_success 'a run without --shard records no shard' '
	cd bench &&
	"$WARDEN" campaign --engine e1 --split chat --concurrency 1 --limit 1 \
	    --run-id whole >/dev/null 2>&1 &&
	test -z "$(grid whole index)"
'

test_expect_success 'a bad K/N is a usage error and runs nothing' '
	cd bench &&
	for bad in 0/2 3/2 1/0 2 x/2 1/2/3 -1/2 1/1001 " 1/2" "1/ 2" 1/+2; do
		expect_exit 2 "$WARDEN" campaign --shard "$bad" --engine e1 \
		    --split chat --concurrency 1 --limit 1 --run-id bad || return 1
		expect_grep "'"'"'--shard'"'"' takes K/N" err || return 1
	done &&
	test -z "$(sqlite3 .warden/warden.db "select run_id from campaign_runs where run_id = '"'"'bad'"'"'")"
'

test_expect_success 'a shard with no engine left is a usage error naming why' '
	cd bench &&
	expect_exit 2 "$WARDEN" campaign --shard 6/6 --run-id empty &&
	expect_grep "shard 6/6 holds no grid point: a shard is whole engines, and the grid has 5" err
'

test_expect_success '--resume keeps the stored shard and takes no --shard' '
	cd bench &&
	expect_exit 2 "$WARDEN" campaign --resume --run-id s1 --shard 1/2 &&
	expect_grep "takes no filters" err
'

test_done
