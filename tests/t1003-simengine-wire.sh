#!/bin/sh
# t1003-simengine-wire: every wire-format variation of warden-simengine is
# switchable and still a stream a correct client can read - several events
# per write, random byte splits, \r\n, "data:" without the space, keep-alive
# comments, a huge event, usage omitted or on every chunk.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/simengine/lib-sim.sh"

test_expect_success '--events-per-write 8 sends tokens eight to a write' '
	# a slow prefill (1 s, long enough for a busy machine to send the role
	# chunk alone before it ends); then all 40 tokens are ready at once,
	# and tokens in one write share a send time
	sim_start s --itl 0 --prefill-rate 1 --output-tokens 40 --events-per-write 8 --trace tr &&
	chat s "$(user_body x)" >stream &&
	sim_stop s &&
	lines_check tr "len(o[0][\"token_ns\"]) == 40" \
	    "sorted(o[0][\"token_ns\"].count(t) for t in set(o[0][\"token_ns\"])) == [8] * 5"
'

test_expect_success '--random-splits cuts writes anywhere and the text is unchanged' '
	sim_start a --itl 0 --output-tokens 200 --seed 5 &&
	sim_start b --itl 0 --output-tokens 200 --seed 5 --random-splits --trace tr2 &&
	chat a "$(user_body "same")" >plain &&
	chat b "$(user_body "same")" >split &&
	sed "s/\"created\":[0-9]*//" plain >plain.n &&
	sed "s/\"created\":[0-9]*//" split >split.n &&
	expect_equal plain.n split.n &&
	sim_stop a && sim_stop b &&
	sse_check split "o[\"done\"]" \
	    "len(set(json.loads(open(\"tr2\").readline())[\"token_ns\"])) > 100"
'

test_expect_success '--crlf ends every line with \r\n' '
	sim_start s --itl 0 --output-tokens 5 --crlf &&
	chat s "$(user_body x)" >stream &&
	test "$(tr -cd "\n" <stream | wc -c)" = "$(tr -cd "\r" <stream | wc -c)" &&
	test "$(tr -cd "\r" <stream | wc -c)" -ge 16 &&
	sim_stop s &&
	sse_check stream "o[\"crlf\"]" "len(o[\"content\"].split()) == 5"
'

test_expect_success '--no-space writes data: without the space' '
	sim_start s --itl 0 --output-tokens 5 --no-space &&
	chat s "$(user_body x)" >stream &&
	expect_grep "^data:{" stream && expect_no_grep "^data: " stream &&
	sim_stop s &&
	sse_check stream "o[\"no_space\"]" "o[\"done\"]"
'

test_expect_success '--keepalive-every 3 adds comment lines a client must skip' '
	sim_start s --itl 0 --output-tokens 9 --keepalive-every 3 &&
	chat s "$(user_body x)" >stream &&
	test "$(grep -c "^: keep-alive" stream)" = 3 &&
	sim_stop s &&
	sse_check stream "o[\"keepalives\"] == 3" "len(o[\"content\"].split()) == 9"
'

test_expect_success '--huge-event-mb 3 sends one event of three megabytes' '
	sim_start s --itl 0 --output-tokens 4 --huge-event-mb 3 &&
	chat s "$(user_body x)" >stream &&
	sim_stop s &&
	sse_check stream "o[\"max_event\"] > 3 * 1024 * 1024" "o[\"done\"]"
'

test_expect_success '--usage omit drops usage even when asked; every puts it on every chunk' '
	sim_start a --itl 0 --output-tokens 5 --usage omit &&
	sim_start b --itl 0 --output-tokens 5 --usage every &&
	chat a "$(user_body x "\"stream_options\":{\"include_usage\":true}")" >omit &&
	chat b "$(user_body x)" >every &&
	chat a "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}" >whole &&
	sim_stop a && sim_stop b &&
	expect_no_grep usage omit &&
	expect_no_grep usage whole &&
	sse_check every "o[\"usage_every\"]" "o[\"usage\"][\"completion_tokens\"] == 5"
'

sim_cleanup
test_done
