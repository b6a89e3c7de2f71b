#!/bin/sh
# t1003-simengine-wire: every wire-format variation of warden-simengine is
# switchable and still a stream a correct client can read - several events
# per write, random byte splits, \r\n, "data:" without the space, keep-alive
# comments, a huge event, usage omitted or on every chunk; the error forms
# and the connection habits of real engines, seen on a raw socket.
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

# raw PORT MODE: two streamed requests ('a', then 'b') written on one TCP
# connection, the second once the first answer has ended; prints what the
# connection gave back, then "EOF" if the server closed it.
raw() {
	"$SIM_PYTHON" - "$1" "$2" <<'PY'
import socket, sys
port, mode = int(sys.argv[1]), sys.argv[2]
body = b'{"model":"sim","stream":true,"messages":[{"role":"user","content":"x"}]}'
def req(rid):
    return (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
            b"application/json\r\nX-Request-Id: " + rid + b"\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n\r\n" + body)
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(10)
s.sendall(req(b"a"))
got = b""
while not got.endswith(b"0\r\n\r\n") and mode != "close-first":
    d = s.recv(65536)
    if not d:
        break
    got += d
if mode == "two":
    try:
        s.sendall(req(b"b"))
    except OSError:
        pass
try:
    while True:
        d = s.recv(65536)
        if not d:
            got += b"\nEOF\n"
            break
        got += d
except ConnectionResetError:
    got += b"\nEOF\n"
except socket.timeout:
    pass
sys.stdout.write(got.decode("utf-8", "replace"))
PY
}

test_expect_success '--keepalive-close announces Keep-Alive, then closes after the stream, the next request unread' '
	sim_start s --itl 0 --output-tokens 3 --keepalive-close --close-delay 100 --trace trka &&
	raw "$(sim_port s)" two >got &&
	curl -sS -D hdr -o /dev/null "http://127.0.0.1:$(sim_port s)/health" &&
	sim_stop s &&
	expect_grep "^Keep-Alive: timeout=5, max=100" got &&
	expect_grep "^Keep-Alive: timeout=5, max=100" hdr &&
	expect_grep "^EOF$" got &&
	test "$(grep -c "^HTTP/1.1 200" got)" = 1 &&
	lines_check trka "len(o) == 1" "o[0][\"request_id\"] == \"a\"" "o[0][\"complete\"]"
'

test_expect_success '--connection-close says Connection: close and closes after each reply' '
	sim_start s --itl 0 --output-tokens 3 --connection-close &&
	raw "$(sim_port s)" one >got &&
	curl -sS -D hdr -o /dev/null "http://127.0.0.1:$(sim_port s)/health" &&
	sim_stop s &&
	expect_grep "^Connection: close" got &&
	expect_grep "^Connection: close" hdr &&
	expect_grep "^EOF$" got &&
	expect_grep "\[DONE\]" got
'

test_expect_success '--close-rate 1 closes the connection before any byte, and traces it' '
	sim_start s --itl 0 --output-tokens 3 --close-rate 1 --trace trclose &&
	raw "$(sim_port s)" close-first >got &&
	sim_stop s &&
	test "$(cat got)" = "
EOF" &&
	lines_check trclose "len(o) == 1" "o[0][\"fault\"] == \"closed\"" \
	    "o[0][\"request_id\"] == \"a\"" "o[0][\"status\"] == 0" \
	    "o[0][\"id\"] == \"closed-1\""
'

test_expect_success '--error-form writes the error as the engines do' '
	for f in event data data-done field; do
		sim_start s --itl 0 --output-tokens 4 --error-event-rate 1 --fault-after 1 \
		    --error-form $f &&
		chat s "$(user_body x)" >"err-$f" &&
		sim_stop s || return 1
	done &&
	expect_grep "^event: error$" err-event &&
	expect_no_grep "\[DONE\]" err-event &&
	expect_grep "^data: {\"error\":{\"message\":\"simulated engine failure\"" err-data &&
	expect_no_grep "\[DONE\]" err-data &&
	expect_no_grep "^event:" err-data &&
	expect_grep "^data: {\"error\":" err-data-done &&
	expect_grep "^data: \[DONE\]$" err-data-done &&
	expect_grep "^error: {\"error\":" err-field &&
	expect_grep "^data: \[DONE\]$" err-field
'

sim_cleanup
test_done
