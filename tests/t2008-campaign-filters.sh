#!/bin/sh
# t2008: a grid filter that matches nothing says which one and what there
# is; nothing is recorded for it. A concurrency level outside the policy
# is allowed (an ad hoc level), said on stderr and recorded with the run.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

runs() {
	sqlite3 .warden/warden.db "select count(*) from campaign_runs" 2>/dev/null || echo 0
}

test_expect_success 'a bench with one engine, two splits, levels 1 and 16' '
	bench_init bench &&
	sim_adapter bench simf --itl 1 --prefill-rate 50000 &&
	bench_policy bench "campaign.concurrency=[1, 16]" \
	    "campaign.splits=[\"chat\", \"agent\"]"
'

test_expect_success '--split not in the policy names the split and the policy splits' '
	cd bench &&
	expect_exit 2 warden campaign --split nosuch &&
	cat err &&
	expect_grep "^warden: .--split nosuch.: split .nosuch. is not in the policy (its splits: chat, agent)" err &&
	test "$(runs)" = 0
'

test_expect_success '--model not in the policy names the model' '
	cd bench &&
	expect_exit 2 warden campaign --model nosuch --split chat &&
	expect_grep "^warden: .--model nosuch.: model .nosuch. is not in the policy (its models: qwen3-0.6b)" err
'

test_expect_success '--engine not in the roster says so' '
	cd bench &&
	expect_exit 2 warden campaign --engine nosuch &&
	expect_grep "^warden: .--engine nosuch.: engine .nosuch. is not in roster .test. (its engines: simf)" err &&
	expect_exit 2 warden campaign --engine simf --engine other &&
	expect_grep "engine .other. is not in roster .test." err &&
	test "$(runs)" = 0
'

test_expect_success 'a level outside the policy runs as an ad hoc level, said and recorded' '
	cd bench &&
	expect_exit 0 warden campaign --concurrency 1,64 --limit 2 --split chat --run-id adhoc &&
	expect_grep "^warden: note: concurrency 64 is not among the policy.s levels (1, 16); the run records it as ad hoc" err &&
	expect_grep "^campaign run adhoc .*ad hoc levels: 64" out &&
	expect_grep "^simf  *64 .* 2/2  *ok$" out &&
	expect_exit 0 warden --json campaign show adhoc &&
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"ad_hoc_levels\"] == [64], d[\"ad_hoc_levels\"]" out
'

test_expect_success 'levels of the policy are not ad hoc' '
	cd bench &&
	expect_exit 0 warden campaign --concurrency 16 --limit 2 --split chat --run-id pol &&
	expect_no_grep "ad hoc" err &&
	expect_no_grep "ad hoc" out
'

test_expect_success 'the man page says ad hoc levels are allowed' '
	grep -q "ad hoc" "$TOP_SRCDIR/doc/warden-campaign.1.md"
'

test_done
