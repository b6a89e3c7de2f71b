#!/usr/bin/env python3
"""loadgen-peer.py URL CONCURRENCY REQUESTS MAX_TOKENS RECORDS

The peer of bench/loadgen-peer.sh: the client of vLLM's
benchmarks/backend_request_func.py (async_request_openai_chat_completions,
as benchmark_serving.py drives it), restated here in a few lines so that
`make bench` can measure warden's load generator beside it in the same
run. What it does as vLLM's does, because that is what costs CPU:

- every request opens its own aiohttp ClientSession (so its own TCP
  connection, and the connector's resolver), posts the chat body with
  "stream": true and reads the answer line by line (`async for` over
  the response's content);
- each line is stripped, decoded, its "data: " prefix removed; "[DONE]"
  ends it; any other line is parsed with json.loads and, when its delta
  has content, it is a token, timed by time.perf_counter() read after
  the line came;
- REQUESTS such requests, at most CONCURRENCY at once (an asyncio
  semaphore around each, all tasks gathered), as benchmark_serving.py
  runs them with --max-concurrency and no request rate.

What it adds, outside the timed work: an X-Request-Id header
("p-INDEX"), so the engine's --trace lines can be matched; the times of
each request's tokens written to RECORDS (one JSON line each: id,
submit_ns, tok), perf_counter being CLOCK_MONOTONIC on Linux as the
engine's trace is; and on stdout one JSON line with the process's CPU
seconds and voluntary context switches over the run (getrusage), the
requests, failures and token events. If LOADGEN_BENCH_PERF_CTL and
LOADGEN_BENCH_PERF_ACK name perf stat's --control fifos, counting is
enabled for the run only (as bench/loadgen-bench does).

A benchmark tool: it prints, and is never installed.
"""
import asyncio
import json
import os
import resource
import sys
import time

import aiohttp

TIMEOUT = aiohttp.ClientTimeout(total=6 * 60 * 60)


class Perf:
    """perf stat's control fifos, when the bench gave them."""

    def __init__(self):
        ctl = os.environ.get("LOADGEN_BENCH_PERF_CTL")
        ack = os.environ.get("LOADGEN_BENCH_PERF_ACK")
        self.ctl = self.ack = None
        if ctl and ack:
            self.ctl = open(ctl, "w")
            self.ack = open(ack, "r")

    def say(self, word):
        if self.ctl is None:
            return
        self.ctl.write(word + "\n")
        self.ctl.flush()
        self.ack.readline()


async def one_request(url, body, index, out):
    """One streamed chat request, read as vLLM's request function reads
    it; its token times go to out."""
    headers = {
        "Content-Type": "application/json",
        "Authorization": "Bearer %s" % os.environ.get("OPENAI_API_KEY"),
        "X-Request-Id": "p-%d" % index,
    }
    tok = []
    ok = False
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        start = time.perf_counter()
        try:
            async with session.post(url=url, json=body,
                                    headers=headers) as response:
                if response.status == 200:
                    async for line in response.content:
                        line = line.strip()
                        if not line:
                            continue
                        chunk = line.decode("utf-8")
                        if chunk.startswith("data: "):
                            chunk = chunk[len("data: "):]
                        if chunk == "[DONE]":
                            continue
                        now = time.perf_counter()
                        data = json.loads(chunk)
                        if data["choices"][0]["delta"].get("content"):
                            tok.append(now)
                    ok = True
        except Exception:
            ok = False
    out.append((index, start, tok, ok))


async def run(url, c, n, max_tokens, out):
    body = {
        "model": "sim-model",
        "messages": [{"role": "user", "content": [
            {"type": "text",
             "text": "Write a long story about a lighthouse keeper."}]}],
        "temperature": 0.0,
        "max_tokens": max_tokens,
        "stream": True,
    }
    gate = asyncio.Semaphore(c)

    async def limited(i):
        async with gate:
            await one_request(url, body, i, out)

    await asyncio.gather(*(limited(i) for i in range(n)))


def main():
    if len(sys.argv) != 6:
        sys.stderr.write(__doc__)
        return 2
    url, c, n, max_tokens, records = (sys.argv[1], int(sys.argv[2]),
                                      int(sys.argv[3]), int(sys.argv[4]),
                                      sys.argv[5])
    out = []
    perf = Perf()
    perf.say("enable")
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    asyncio.run(run(url, c, n, max_tokens, out))
    wall = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    perf.say("disable")
    events = failed = 0
    with open(records, "w") as f:
        for index, start, tok, ok in out:
            if not ok:
                failed += 1
                continue
            events += len(tok)
            f.write(json.dumps({"id": "p-%d" % index,
                                "submit_ns": int(start * 1e9),
                                "tok": [int(t * 1e9) for t in tok]}) + "\n")
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    print(json.dumps({"requests": n, "failed": failed, "events": events,
                      "cpu_s": cpu, "wall_s": wall,
                      "nvcsw": ru1.ru_nvcsw - ru0.ru_nvcsw,
                      "nivcsw": ru1.ru_nivcsw - ru0.ru_nivcsw,
                      "workers": 1}))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
