#!/bin/sh
# t1001-simengine-api: warden-simengine speaks the OpenAI chat-completions
# API - health, models, streaming and non-streaming replies, usage, tool
# calls, reasoning, determinism, startup delay and a clean SIGTERM.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/simengine/lib-sim.sh"

test_expect_success '--help documents every flag, and the man page text does too' '
	"$SIMENGINE" --help >help &&
	grep -o -e "--[a-z][a-z-]*" help | sort -u >flags &&
	test "$(wc -l <flags)" -ge 45 &&
	for f in $(cat flags); do
		grep -q -e "$f" "$TOP_SRCDIR/tests/simengine/warden-simengine.md" ||
		{ echo "$f missing from warden-simengine.md"; exit 1; }
	done &&
	expect_grep "--events-per-write N" help &&
	expect_grep "--broken-mode MODE" help
'

test_expect_success 'an unknown flag is a usage error (exit 2)' '
	expect_exit 2 "$SIMENGINE" --no-such-flag &&
	expect_grep "warden-simengine: unknown option .--no-such-flag." err
'

test_expect_success '--port 0 writes the chosen port; /health and /v1/models answer' '
	sim_start s --model qwen3-0.6b &&
	port=$(sim_port s) && test "$port" -gt 0 &&
	test "$(curl -sS -o health -w "%{http_code}" "http://127.0.0.1:$port/health")" = 200 &&
	curl -sS "http://127.0.0.1:$port/v1/models" >models &&
	sim_stop s &&
	json_check models "o[\"object\"] == \"list\"" "o[\"data\"][0][\"id\"] == \"qwen3-0.6b\""
'

test_expect_success 'a streamed reply is a valid chat-completions stream with usage last' '
	sim_start s --itl 1 --output-tokens 12 &&
	chat s "$(user_body "one two three four" "\"stream_options\":{\"include_usage\":true}")" >stream &&
	chat s "$(user_body "hi")" >nousage &&
	sim_stop s &&
	expect_no_grep usage nousage &&
	sse_check stream "o[\"role_first\"]" "o[\"done\"]" \
	    "o[\"usage\"][\"prompt_tokens\"] == 4" \
	    "o[\"usage\"][\"completion_tokens\"] == 12" \
	    "o[\"usage_chunks\"] == 1" "o[\"finish_reason\"] == \"stop\"" \
	    "len(o[\"content\"].split()) == 12"
'

test_expect_success 'a non-streamed reply is a chat.completion with the same text' '
	sim_start s --itl 0 --output-tokens 9 &&
	chat s "$(user_body "same prompt here")" >stream &&
	chat s "{\"model\":\"sim\",\"messages\":[{\"role\":\"user\",\"content\":\"same prompt here\"}]}" >whole &&
	sim_stop s &&
	sse_check stream >sum &&
	json_check whole "o[\"object\"] == \"chat.completion\"" \
	    "o[\"choices\"][0][\"message\"][\"content\"] == json.load(open(\"sum\"))[\"content\"]" \
	    "o[\"usage\"][\"completion_tokens\"] == 9" "o[\"usage\"][\"prompt_tokens\"] == 3" \
	    "o[\"choices\"][0][\"finish_reason\"] == \"stop\""
'

test_expect_success 'replies depend on seed and prompt only' '
	sim_start a --itl 0 --seed 7 && sim_start b --itl 0 --seed 7 &&
	sim_start c --itl 0 --seed 8 &&
	chat a "$(user_body "tell me")" >a1 && chat b "$(user_body "tell me")" >b1 &&
	chat c "$(user_body "tell me")" >c1 && chat a "$(user_body "tell you")" >a2 &&
	sim_stop a && sim_stop b && sim_stop c &&
	for f in a1 b1 c1 a2; do grep -o "\"content\":\"[^\"]*\"" $f >$f.txt; done &&
	expect_equal a1.txt b1.txt &&
	! cmp -s a1.txt c1.txt && ! cmp -s a1.txt a2.txt
'

test_expect_success 'max_tokens caps the reply with finish_reason length' '
	sim_start s --itl 0 --output-tokens 50 &&
	chat s "$(user_body "x" "\"max_tokens\":7,\"stream_options\":{\"include_usage\":true}")" >stream &&
	sim_stop s &&
	sse_check stream "o[\"usage\"][\"completion_tokens\"] == 7" \
	    "o[\"finish_reason\"] == \"length\""
'

test_expect_success 'prompt tokens count whitespace words over all messages' '
	sim_start s --itl 0 &&
	chat s "{\"stream\":false,\"messages\":[{\"role\":\"system\",\"content\":\"be  brief\"},{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a b\\nc\"}]}]}" >whole &&
	sim_stop s &&
	json_check whole "o[\"usage\"][\"prompt_tokens\"] == 5"
'

test_expect_success 'a TOOL_CALL prompt with tools gets tool_calls deltas and empty content' '
	sim_start s --itl 0 --output-tokens 6 &&
	chat s "$(user_body "please TOOL_CALL now" "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"grep_repo\",\"parameters\":{}}}]")" >stream &&
	chat s "$(user_body "TOOL_CALL but no tools")" >plain &&
	sim_stop s &&
	sse_check stream "o[\"content\"] == \"\"" "o[\"finish_reason\"] == \"tool_calls\"" \
	    "o[\"tool_calls\"][0][\"name\"] == \"grep_repo\"" \
	    "\"query\" in json.loads(o[\"tool_calls\"][0][\"arguments\"])" &&
	sse_check plain "o[\"finish_reason\"] == \"stop\"" "o[\"tool_calls\"] == []"
'

test_expect_success 'reasoning tokens stream as reasoning_content before the content' '
	sim_start s --itl 0 --output-tokens 4 --reasoning-tokens 3 &&
	chat s "$(user_body "think")" >stream &&
	sim_stop s &&
	sse_check stream "len(o[\"reasoning\"].split()) == 3" "len(o[\"content\"].split()) == 4" &&
	last_r=$(grep -n reasoning_content stream | tail -1 | cut -d: -f1) &&
	first_c=$(grep -n "\"content\":\"[^\"]" stream | head -1 | cut -d: -f1) &&
	test "$last_r" -lt "$first_c"
'

# code NAME PATH [CURL-ARGS...]: the HTTP status of one request.
code() {
	_n=$1
	_path=$2
	shift 2
	curl -s -o /dev/null -w "%{http_code}" "$@" "http://127.0.0.1:$(sim_port "$_n")$_path"
}

# now_ns: CLOCK_MONOTONIC in ns (date +%N is GNU's only).
now_ns() {
	$SIM_PYTHON -c "import time; print(time.monotonic_ns())"
}

# No race with the clock: a delay no test run reaches shows the 503s, a
# short one is polled until it turns, and it may turn late but not early.
test_expect_success '--startup-delay answers 503 until ready' '
	sim_spawn long 1200 --startup-delay 3600 &&
	test "$(code long /health)" = 503 &&
	test "$(code long /v1/chat/completions -d "{}")" = 503 &&
	sim_stop long &&
	t0=$(now_ns) &&
	sim_spawn s 1200 --startup-delay 1 &&
	n=0 &&
	while c=$(code s /health) && [ "$c" = 503 ]; do
		n=$((n + 1)); [ $n -lt 1200 ] || exit 1; sleep 0.05
	done &&
	t1=$(now_ns) &&
	test "$c" = 200 &&
	test $((t1 - t0)) -ge 1000000000 &&
	test "$(code s /health)" = 200 &&
	sim_stop s
'

test_expect_success 'bad requests get OpenAI error objects' '
	sim_start s --itl 0 --strict-model --model m1 &&
	url=$(sim_url s) &&
	test "$(curl -s -o e1 -w "%{http_code}" -d "not json" "$url")" = 400 &&
	test "$(curl -s -o e2 -w "%{http_code}" -d "{\"messages\":[]}" "$url")" = 400 &&
	test "$(curl -s -o e3 -w "%{http_code}" -d "{\"model\":\"m2\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}" "$url")" = 404 &&
	test "$(curl -s -o e4 -w "%{http_code}" "http://127.0.0.1:$(sim_port s)/v2/nothing")" = 404 &&
	test "$(curl -s -o e5 -w "%{http_code}" "$url")" = 405 &&
	sim_stop s &&
	for f in e1 e2 e3 e4 e5; do cat $f; echo; done >errs &&
	lines_check errs "len(o) == 5" \
	    "all(isinstance(e[\"error\"][\"message\"], str) for e in o)" \
	    "o[1][\"error\"][\"type\"] == \"invalid_request_error\"" &&
	expect_grep "non-empty array" e2
'

test_expect_success 'a JSON profile sets options and flags after it override' '
	printf "{\"model\": \"from-profile\", \"output-tokens\": 3, \"itl\": 0}\n" >p.json &&
	sim_start s --config p.json --output-tokens 5 &&
	chat s "$(user_body "x" "\"stream_options\":{\"include_usage\":true}")" >stream &&
	sim_stop s &&
	expect_grep "\"model\":\"from-profile\"" stream &&
	sse_check stream "o[\"usage\"][\"completion_tokens\"] == 5"
'

test_expect_success 'SIGTERM while a stream is in flight exits 0 promptly' '
	sim_start s --itl 200 --output-tokens 100 || exit 1
	rm -f stream &&
	{ chat s "$(user_body "long")" >stream & } &&
	cpid=$! &&
	n=0 &&
	until grep -q "\"content\"" stream 2>/dev/null; do
		n=$((n + 1)); [ $n -lt 1200 ] || exit 1; sleep 0.05
	done &&
	sim_stop s &&
	{ wait $cpid || true; } &&
	expect_grep "\"content\"" stream &&
	expect_no_grep "DONE" stream
'

sim_cleanup
test_done
