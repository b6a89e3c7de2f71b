#!/bin/sh
# t1005-simengine-fidelity: fidelity prompts (CLASSIFY id=...) are answered
# from --labels with the configured accuracy, reproducibly, and the
# template bug makes answers unparsable.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/simengine/lib-sim.sh"

$SIM_PYTHON -c '
labels = ["typosquat", "dependency confusion", "malicious update",
          "account takeover", "build compromise"]
with open("'"$TEST_DIR"'/labels.jsonl", "w") as f:
    for i in range(200):
        f.write("{\"id\": \"gm-%03d\", \"label\": \"%s\"}\n" % (i, labels[(i * 3) % 5]))
'

test_expect_success 'accuracy 1 answers every item with its gold label' '
	sim_start s --itl 0 --labels labels.jsonl &&
	$SIMCLIENT classify "$(sim_port s)" labels.jsonl 40 >answers &&
	lines_check answers "len(o) == 40" "all(r[\"answer\"] == r[\"gold\"] for r in o)" &&
	sim_stop s
'

test_expect_success 'accuracy 0.7 is met and the same seed gives the same answers' '
	sim_start a --itl 0 --labels labels.jsonl --accuracy 0.7 --seed 11 &&
	sim_start b --itl 0 --labels labels.jsonl --accuracy 0.7 --seed 11 &&
	$SIMCLIENT classify "$(sim_port a)" labels.jsonl >a.out &&
	$SIMCLIENT classify "$(sim_port b)" labels.jsonl >b.out &&
	expect_equal a.out b.out &&
	lines_check a.out "0.6 <= sum(r[\"answer\"] == r[\"gold\"] for r in o) / len(o) <= 0.8" \
	    "len(o) == 200" \
	    "all(r[\"answer\"] in {json.loads(l)[\"label\"] for l in open(\"labels.jsonl\")} for r in o)" &&
	sim_stop a && sim_stop b
'

test_expect_success 'the template bug leaves no label in the answer' '
	sim_start s --itl 0 --labels labels.jsonl --template-bug-rate 1 --trace tr &&
	$SIMCLIENT classify "$(sim_port s)" labels.jsonl 10 >answers &&
	expect_grep "im_start" answers &&
	lines_check answers "len(o) == 10" \
	    "not any(x[\"label\"] in r[\"answer\"] for r in o for x in map(json.loads, open(\"labels.jsonl\")))" &&
	sim_stop s &&
	test "$(grep -c "\"fault\":\"template_bug\"" tr)" = 10
'

test_expect_success 'an id not in the labels gets ordinary text' '
	sim_start s --itl 0 --labels labels.jsonl --output-tokens 8 &&
	chat s "{\"messages\":[{\"role\":\"user\",\"content\":\"CLASSIFY id=unknown-1\"}]}" >r &&
	sim_stop s &&
	json_check r "len(o[\"choices\"][0][\"message\"][\"content\"].split()) == 8"
'

test_expect_success 'a bad labels file stops the engine at start with its line' '
	printf "{\"id\":\"a\",\"label\":\"x\"}\nnot json\n" >bad.jsonl &&
	expect_exit 2 "$SIMENGINE" --port 0 --labels bad.jsonl &&
	expect_grep "bad.jsonl:2:" err
'

sim_cleanup
test_done
