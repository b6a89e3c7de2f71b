#!/bin/sh
# t2009: past runs: `warden campaign list` and `warden campaign show RUN`,
# each as text, --json and --csv; show prints what the run printed.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

test_expect_success 'a bench with no run yet lists none' '
	bench_init bench &&
	sim_adapter bench siml --itl 1 --prefill-rate 50000 &&
	bench_policy bench "campaign.concurrency=[1, 4]" &&
	cd bench &&
	expect_exit 0 warden campaign list &&
	test ! -s out && expect_grep "^no campaign runs" err &&
	expect_exit 0 warden --json campaign list &&
	test "$(cat out)" = "[]"
'

test_expect_success 'two finished runs and one that was interrupted' '
	cd bench &&
	expect_exit 0 warden campaign --limit 4 --run-id first &&
	cp out ../first.out &&
	expect_exit 0 warden campaign --limit 2 --run-id second --concurrency 4 &&
	expect_exit 0 warden campaign --limit 2 --run-id cut &&
	sqlite3 .warden/warden.db "update campaign_runs set state = '"'"'running'"'"', finished = null where run_id = '"'"'cut'"'"'; delete from campaign_sweeps where run_id = '"'"'cut'"'"' and seq = 1"
'

test_expect_success 'list shows every run, newest first, with its state and sweeps' '
	cd bench &&
	expect_exit 0 warden campaign list &&
	cat out &&
	expect_grep "^run  *created  *state  *sweeps  *roster" out &&
	sed -n "2,\$p" out | cut -d" " -f1 >ids &&
	printf "cut\nsecond\nfirst\n" >want &&
	expect_equal want ids &&
	expect_grep "^first  *20[0-9-]*T[0-9:.]*Z  *done  *2/2  *test" out &&
	expect_grep "^cut  .*  *running  *1/2  *test" out
'

test_expect_success 'list --json and --csv carry the same runs' '
	cd bench &&
	expect_exit 0 warden campaign list --json &&
	python3 - out <<-PY &&
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert [r["run_id"] for r in d] == ["cut", "second", "first"], d
	r = d[2]
	assert r["state"] == "done" and r["sweeps"] == 2 and r["sweeps_done"] == 2
	assert r["roster"] == "test" and len(r["machine"]) == 16
	assert r["created"].endswith("Z") and r["finished"].endswith("Z")
	assert d[0]["state"] == "running" and d[0]["finished"] is None
	PY
	expect_exit 0 warden campaign list --csv &&
	head -n 1 out >hdr &&
	echo "run_id,created,finished,state,sweeps,sweeps_done,roster,machine" >want &&
	expect_equal want hdr &&
	test "$(sed -n 4p out | cut -d, -f1,4,5,6,7)" = "first,done,2,2,test"
'

test_expect_success 'show RUN prints what the run printed' '
	cd bench &&
	expect_exit 0 warden campaign show first &&
	expect_equal ../first.out out
'

test_expect_success 'show of an interrupted run shows its finished sweeps and how to resume' '
	cd bench &&
	expect_exit 0 warden campaign show cut &&
	expect_grep "^campaign run cut .*running" out &&
	expect_grep "^siml  *1 .* 2/2  *ok$" out &&
	expect_no_grep "^siml  *4 " out &&
	expect_grep "warden campaign --resume --run-id cut" err
'

test_expect_success 'show --json is the run report; --csv one line per sweep' '
	cd bench &&
	expect_exit 0 warden --json campaign show first &&
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"run_id\"] == \"first\" and len(d[\"tables\"][0][\"rows\"]) == 2" out &&
	expect_exit 0 warden campaign show first --csv &&
	cat out &&
	head -n 1 out >hdr &&
	echo "run_id,model,split,engine,concurrency,status,outcome,completed,total,warmups_ok,warmups_failed,ttft_samples,e2el_samples,duration,request_throughput,output_throughput,mean_ttft_ms,median_ttft_ms,p90_ttft_ms,p99_ttft_ms,mean_tpot_ms,median_tpot_ms,p99_tpot_ms,mean_itl_ms,median_itl_ms,p99_itl_ms,mean_e2el_ms,median_e2el_ms,p99_e2el_ms,peak_engine_memory_bytes,peak_system_memory_bytes,client_limited,date,detail" >want &&
	expect_equal want hdr &&
	test $(wc -l <out) -eq 3 &&
	expect_grep "^first,qwen3-0.6b,chat,siml,4,ok,complete,4,4," out
'

test_expect_success 'csv quotes a field with a comma or a quote' '
	cd bench &&
	sqlite3 .warden/warden.db "update campaign_sweeps set detail = '"'"'a, \"b\"'"'"' where run_id = '"'"'second'"'"'" &&
	expect_exit 0 warden campaign show second --csv &&
	expect_grep ",\"a, \"\"b\"\"\"\$" out
'

test_expect_success 'show of a run that does not exist, or without a run, is a usage error' '
	cd bench &&
	expect_exit 2 warden campaign show nosuch &&
	expect_grep "^warden: no campaign run .nosuch." err &&
	expect_exit 2 warden campaign show &&
	expect_grep "usage: warden campaign" err &&
	expect_exit 2 warden campaign show first --json --csv &&
	expect_exit 2 warden campaign list extra
'

test_expect_success 'doc/campaign.md and the man page document list and show' '
	grep -q "warden campaign list" "$TOP_SRCDIR/doc/campaign.md" &&
	grep -q "warden campaign show" "$TOP_SRCDIR/doc/campaign.md" &&
	grep -q "^## campaign list" "$TOP_SRCDIR/doc/warden-campaign.1.md" &&
	grep -q "^## campaign show" "$TOP_SRCDIR/doc/warden-campaign.1.md"
'

test_done
