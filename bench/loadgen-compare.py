#!/usr/bin/env python3
"""loadgen-compare.py TRACE RECORDS RUN PERF

One client's row of bench/loadgen-peer.sh, as one JSON line: its run
summary (RUN, the JSON line loadgen-bench side or loadgen-peer.py
printed), its per-request token times (RECORDS) matched by request id with
warden-simengine's --trace (TRACE, the engine's send time of each token),
and the counts perf stat wrote (PERF, its -x, output; empty if perf was
not there). Both clocks are CLOCK_MONOTONIC on one machine.

Figures: us_per_event (the client process's CPU, every thread, over the
run, per token event), events_per_wakeup (token events per voluntary
context switch: the times the client slept and was woken),
syscalls_per_event and waits_per_event (epoll_wait calls) when perf
counted; rs_p50_us / rs_p99_us / rs_max_us, the client's time of each
token minus the engine's send time of it, and shared_time, the tokens
timed the same as the one before them (read together); ttft_bias_p50_ms / ttft_bias_p99_ms, the
client's TTFT (first token minus submission) minus the engine's (its send
time of the first token minus its receipt of the request), which is the
first token's receive-minus-send (first_rs_p50_us) plus the time from
submission to the engine's receipt of the request (reach_p50_us,
reach_p99_us).
"""
import json
import sys


def percentile(v, q):
    """Linear between closest ranks (numpy's default, as warden's)."""
    v = sorted(v)
    if not v:
        return 0.0
    h = (len(v) - 1) * q
    lo = int(h)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (h - lo) * (v[hi] - v[lo])


def perf_counts(path):
    counts = {}
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return counts
    for line in lines:
        f = line.split(",")
        if len(f) < 3 or not f[0].strip().isdigit():
            continue
        counts[f[2]] = counts.get(f[2], 0) + int(f[0])
    return counts


def main():
    trace_path, records_path, run_path, perf_path = sys.argv[1:5]
    run = json.loads(open(run_path).read().strip().splitlines()[-1])
    trace = {}
    for line in open(trace_path):
        try:
            t = json.loads(line)
        except ValueError:
            continue
        if t.get("request_id"):
            trace[t["request_id"]] = t
    rs, bias, first, reach = [], [], [], []
    shared = 0
    matched = total = 0
    for line in open(records_path):
        r = json.loads(line)
        total += 1
        t = trace.get(r["id"])
        if t is None or len(t["token_ns"]) != len(r["tok"]) or not r["tok"]:
            continue
        matched += 1
        for mine, sent in zip(r["tok"], t["token_ns"]):
            rs.append((mine - sent) / 1e3)
        shared += sum(1 for a, b in zip(r["tok"], r["tok"][1:]) if a == b)
        bias.append(((r["tok"][0] - r["submit_ns"]) -
                     (t["token_ns"][0] - t["received_ns"])) / 1e6)
        first.append((r["tok"][0] - t["token_ns"][0]) / 1e3)
        reach.append((t["received_ns"] - r["submit_ns"]) / 1e3)
    events = run["events"]
    counts = perf_counts(perf_path)
    out = {
        "requests": run["requests"], "failed": run["failed"],
        "matched": matched, "records": total, "events": events,
        "workers": run.get("workers", 1),
        "us_per_event": run["cpu_s"] * 1e6 / events if events else 0,
        "events_per_wakeup": events / run["nvcsw"] if run["nvcsw"] else 0,
        "rs_p50_us": percentile(rs, 0.5), "rs_p99_us": percentile(rs, 0.99),
        "rs_max_us": max(rs) if rs else 0, "shared_time": shared,
        "ttft_bias_p50_ms": percentile(bias, 0.5),
        "ttft_bias_p99_ms": percentile(bias, 0.99),
        "first_rs_p50_us": percentile(first, 0.5),
        "reach_p50_us": percentile(reach, 0.5),
        "reach_p99_us": percentile(reach, 0.99),
    }
    if counts and events:
        out["syscalls_per_event"] = counts.get(
            "raw_syscalls:sys_enter", 0) / events
        out["waits_per_event"] = (
            counts.get("syscalls:sys_enter_epoll_wait", 0) +
            counts.get("syscalls:sys_enter_epoll_pwait", 0)) / events
    print(json.dumps(out))


if __name__ == "__main__":
    main()
