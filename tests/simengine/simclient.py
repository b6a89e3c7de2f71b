#!/usr/bin/env python3
# simclient.py - the independent check of warden-simengine's output in the
# t1xxx tests: an SSE validator written from the OpenAI chat-completions
# format (not from the engine's code), plus small load helpers.
#
#   simclient.py check FILE [EXPR..] validate a stream; with EXPRs, assert
#                                    each (Python, over the summary `o`),
#                                    else print the summary as JSON
#   simclient.py expect FILE EXPR..  assert EXPRs over a JSON file `o`
#   simclient.py lines FILE EXPR..   the same over a JSON-lines file (`o`
#                                    is the list of its objects)
#   simclient.py fire PORT N BODY    N concurrent requests, wait for all
#   simclient.py classify PORT LABELS [N]   fidelity items, print answers
#
# Never used by warden itself; stdlib only; 127.0.0.1 only.
import json
import sys
import threading
import urllib.request


def expect(o, exprs):
    for e in exprs:
        try:
            ok = eval(e, {"o": o, "json": json})
        except Exception as ex:  # a failing expression is a failed check
            ok = "%s: %s" % (type(ex).__name__, ex)
        if ok is not True and not (ok and not isinstance(ok, str)):
            sys.stderr.write(json.dumps(o, ensure_ascii=False)[:4000] + "\n")
            raise SystemExit("check failed: %s (%s)" % (e, ok))


def load_json(path, lines):
    text = open(path, encoding="utf-8").read()
    if lines:
        return [json.loads(l) for l in text.splitlines() if l.strip()]
    return json.loads(text)


def check(path, exprs):
    raw = open(path, "rb").read()
    text = raw.decode("utf-8")  # the whole stream must be valid UTF-8
    crlf = "\r\n" in text
    lines = text.replace("\r\n", "\n").split("\n")
    out = {"events": 0, "keepalives": 0, "content": "", "reasoning": "",
           "tool_calls": [], "usage": None, "usage_chunks": 0,
           "usage_every": True, "finish_reason": None, "done": False,
           "malformed": 0, "error_event": False, "crlf": crlf,
           "no_space": False, "max_event": 0, "role_first": None}
    event = None
    data = []
    for line in lines:
        if line == "":
            if data:
                dispatch(out, event, "\n".join(data))
            event, data = None, []
            continue
        if line.startswith(":"):
            out["keepalives"] += 1
            continue
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        elif field == "data":
            out["no_space"] = True
        if field == "data":
            data.append(value)
        elif field == "event":
            event = value
    if exprs:
        expect(out, exprs)
    else:
        print(json.dumps(out, ensure_ascii=False))


def dispatch(out, event, payload):
    out["events"] += 1
    out["max_event"] = max(out["max_event"], len(payload.encode()))
    if out["done"]:
        raise SystemExit("event after [DONE]")
    if payload == "[DONE]":
        out["done"] = True
        return
    try:
        obj = json.loads(payload)
    except ValueError:
        out["malformed"] += 1
        return
    if event == "error" or "error" in obj:
        out["error_event"] = True
        return
    assert obj["object"] == "chat.completion.chunk", obj
    assert obj["id"].startswith("chatcmpl-"), obj
    assert isinstance(obj["created"], int) and isinstance(obj["model"], str)
    if "usage" in obj and obj["usage"] is not None:
        u = obj["usage"]
        assert u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"]
        out["usage"] = u
        if not obj["choices"]:
            out["usage_chunks"] += 1
    elif obj["choices"]:
        out["usage_every"] = False
    for ch in obj["choices"]:
        assert ch["index"] == 0
        d = ch["delta"]
        if out["role_first"] is None:
            out["role_first"] = (d.get("role") == "assistant" and
                                 not d.get("content"))
        out["content"] += d.get("content") or ""
        out["reasoning"] += d.get("reasoning_content") or ""
        for tc in d.get("tool_calls") or []:
            if "id" in tc:
                out["tool_calls"].append({"name": tc["function"]["name"],
                                          "arguments": ""})
            out["tool_calls"][tc["index"]]["arguments"] += \
                tc["function"].get("arguments", "")
        if ch.get("finish_reason"):
            out["finish_reason"] = ch["finish_reason"]


def post(port, body, timeout=60):
    req = urllib.request.Request(
        "http://127.0.0.1:%d/v1/chat/completions" % port,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read()


def fire(port, n, body):
    errors = []

    def one():
        try:
            post(port, body)
        except Exception as e:  # reported, the caller decides
            errors.append(str(e))
    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"requests": n, "errors": errors}))


def classify(port, labels, limit):
    items = [json.loads(l) for l in open(labels) if l.strip()][:limit]
    for it in items:
        body = {"model": "sim", "max_tokens": 16, "messages": [
            {"role": "system", "content": "Answer with one label."},
            {"role": "user", "content": "Incident text.\nCLASSIFY id=%s\n"
             % it["id"]}]}
        reply = json.loads(post(port, body))
        answer = reply["choices"][0]["message"]["content"]
        print(json.dumps({"id": it["id"], "gold": it["label"],
                          "answer": answer}))


def main():
    cmd = sys.argv[1]
    if cmd == "check":
        check(sys.argv[2], sys.argv[3:])
    elif cmd in ("expect", "lines"):
        expect(load_json(sys.argv[2], cmd == "lines"), sys.argv[3:])
    elif cmd == "fire":
        fire(int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4]))
    elif cmd == "classify":
        classify(int(sys.argv[2]), sys.argv[3],
                 int(sys.argv[4]) if len(sys.argv) > 4 else 10**9)
    else:
        raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    main()
