#!/bin/sh
# t1002-simengine-faults: each injected fault of warden-simengine does what
# it says - HTTP 500, zero tokens, stalls, malformed lines, error events,
# connection resets, and aborts by request count, concurrency or open
# connections - and the trace names it.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/simengine/lib-sim.sh"

test_expect_success '--fail-rate 1 answers 500 with an error object, traced as http_500' '
	sim_start s --itl 0 --fail-rate 1 --trace trace &&
	test "$(curl -s -o body -w "%{http_code}" -d "$(user_body x)" "$(sim_url s)")" = 500 &&
	sim_stop s &&
	json_check body "o[\"error\"][\"type\"] == \"server_error\"" &&
	expect_grep "\"status\":500" trace &&
	expect_grep "\"fault\":\"http_500\"" trace
'

test_expect_success '--fail-rate 0.5 fails about half, the same ones for the same seed' '
	for run in 1 2; do
		sim_start s --itl 0 --fail-rate 0.5 --seed 3 || exit 1
		for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
			curl -s -o /dev/null -w "%{http_code}\n" -d "$(user_body x)" "$(sim_url s)"
		done >codes.$run
		sim_stop s || exit 1
	done &&
	expect_equal codes.1 codes.2 &&
	n=$(grep -c 500 codes.1) && test "$n" -ge 2 && test "$n" -le 10 &&
	test "$(grep -c 200 codes.1)" -eq $((12 - n))
'

test_expect_success '--zero-rate 1 streams a complete reply with zero tokens' '
	sim_start s --itl 0 --zero-rate 1 --trace trace0 &&
	chat s "$(user_body x "\"stream_options\":{\"include_usage\":true}")" >stream &&
	sim_stop s &&
	sse_check stream "o[\"done\"]" "o[\"content\"] == \"\"" \
	    "o[\"usage\"][\"completion_tokens\"] == 0" "o[\"finish_reason\"] == \"stop\"" &&
	expect_grep "\"first_token_ns\":null" trace0 &&
	expect_grep "\"fault\":\"zero_tokens\"" trace0
'

test_expect_success '--stall goes silent after --fault-after tokens, then finishes' '
	# silent: a stall of 10 min, watched until its 3 tokens have come
	sim_start long --itl 0 --output-tokens 6 --stall 600 --fault-after 3 &&
	{ chat long "$(user_body x)" >cut 2>/dev/null & } &&
	n=0 &&
	until [ "$(grep -c "\"content\":\"[^\"]" cut 2>/dev/null)" = 3 ]; do
		n=$((n + 1)); [ $n -lt 1200 ] || exit 1; sleep 0.05
	done &&
	sim_stop long && wait &&
	test "$(grep -c "\"content\":\"[^\"]" cut)" = 3 &&
	expect_no_grep DONE cut &&
	# then finishes: a short stall, which no reply ends before
	sim_start s --itl 0 --output-tokens 6 --stall 1.2 --fault-after 3 &&
	chat s "$(user_body x)" -w "%{time_total}\n" -o full >t &&
	sim_stop s &&
	sse_check full "o[\"done\"]" "float(open(\"t\").read()) >= 1.2"
'

test_expect_success '--malformed-rate 1 sends one unparsable data line' '
	sim_start s --itl 0 --output-tokens 5 --malformed-rate 1 &&
	chat s "$(user_body x)" >stream &&
	sim_stop s &&
	sse_check stream "o[\"malformed\"] == 1" "o[\"done\"]"
'

test_expect_success '--error-event-rate 1 sends event: error and no [DONE]' '
	sim_start s --itl 0 --output-tokens 5 --error-event-rate 1 --trace tr &&
	chat s "$(user_body x)" >stream &&
	expect_grep "^event: error" stream &&
	sim_stop s &&
	sse_check stream "o[\"error_event\"]" "not o[\"done\"]" &&
	expect_grep "\"fault\":\"error_event\"" tr
'

test_expect_success '--reset-rate 1 resets the connection mid-stream' '
	sim_start s --itl 0 --output-tokens 50 --reset-rate 1 --fault-after 4 --trace tr &&
	rc=0 && chat s "$(user_body x)" >stream 2>cerr || rc=$? &&
	test "$rc" = 56 &&
	expect_grep "reset by peer" cerr &&
	test "$(grep -c "\"content\":\"[^\"]" stream)" = 4 &&
	sim_stop s &&
	expect_grep "\"fault\":\"reset\"" tr &&
	expect_grep "\"complete\":false" tr
'

test_expect_success '--abort-after 2 kills the process on the third request' '
	sim_start s --itl 0 --abort-after 2 &&
	chat s "$(user_body x)" >r1 && chat s "$(user_body x)" >r2 &&
	rc=0 && chat s "$(user_body x)" >r3 2>/dev/null || rc=$? &&
	test "$rc" -ne 0 &&
	sim_wait_exit s && test "$SIM_RC" = 134 &&
	expect_grep DONE r2
'

test_expect_success '--abort-at-concurrency 3 survives two in flight, dies at three' '
	sim_start s --itl 50 --output-tokens 10 --abort-at-concurrency 3 &&
	$SIMCLIENT fire "$(sim_port s)" 2 "$(user_body x)" >two &&
	$SIMCLIENT fire "$(sim_port s)" 3 "$(user_body x)" >three &&
	cat two three >both &&
	lines_check both "len(o[0][\"errors\"]) == 0" "len(o[1][\"errors\"]) >= 1" &&
	sim_wait_exit s && test "$SIM_RC" = 134
'

# conns PORT N: open N connections, then send one request on the last
# opened and print its HTTP status, or "dead" if the engine hung up.
conns() {
	python3 - "$1" "$2" "$(user_body x)" <<-PY
	import socket, sys
	port, n, body = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode()
	socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
	s = socks[-1]
	s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
	          b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
	          % len(body) + body)
	head = s.recv(64)
	print(head.split()[1].decode() if head else "dead")
	PY
}

# (4, not 3: the readiness probe's connection may not be seen closed yet)
test_expect_success '--abort-at-connections 4 answers with two connections open, dies with four' '
	sim_start s --itl 0 --output-tokens 2 --abort-at-connections 4 &&
	test "$(conns "$(sim_port s)" 2)" = 200 &&
	test "$(conns "$(sim_port s)" 4)" = dead &&
	sim_wait_exit s && test "$SIM_RC" = 134
'

sim_cleanup
test_done
