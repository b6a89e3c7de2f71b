#!/usr/bin/env python3
"""make-workloads.py - generate workloads/chat.jsonl and workloads/agent.jsonl.

Deterministic: the same script always writes the same bytes (a fixed seed,
no clock, no environment). The prompts are synthetic text whose lengths
follow the SiliconBench splits: chat 21-3.5K tokens with output targets
64 or 256; agent 0.3K-8.9K tokens with a tool list, up to 256 output
tokens, and the marker TOOL_CALL in the prompts that should be answered
with a tool call. Each file also carries 3 warmup prompts ("set":
"warmup") that are not in the timed set. See README.md for the format.

usage: make-workloads.py [OUTDIR]     (default: the script's directory)
"""
import json
import math
import os
import random
import sys

SEED = 20260917
TIMED = 100
WARMUPS = 3
# Synthetic text is about 1.3 tokens per word for common tokenizers.
TOKENS_PER_WORD = 1.3

WORDS = (
    "the of and to in is that for it as was with be by on not he this are "
    "or his from at which but have an they you were her she there been one "
    "all we their has would when if so no will more can out up about what "
    "into them some could time these two may then do first any my now such "
    "like our over man me even most made after also did many before must "
    "through back years where much your way well down should because each "
    "just those people how too little state good very make world still own "
    "see men work long get here between both life being under never day "
    "same another know while last might us great old year off come since "
    "against go came right used take three kernel buffer cache request "
    "server token batch memory queue thread socket engine model prompt "
    "latency throughput stream decode prefill context window layer weight"
).split()

TOPICS = [
    "Summarise the following notes in plain language.",
    "Explain what the following passage says about the system.",
    "Rewrite the following text as a short list of facts.",
    "Answer the question at the end using the text before it.",
    "Translate the main idea of this text into one paragraph.",
]

AGENT_SYSTEM = (
    "You are a coding agent working in a repository. Use the tools when "
    "an action on files or commands is needed; otherwise answer directly."
)

TOOLS = [
    {"type": "function", "function": {
        "name": "read_file",
        "description": "Read a file of the repository.",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}}, "required": ["path"]}}},
    {"type": "function", "function": {
        "name": "run_command",
        "description": "Run a shell command in the repository.",
        "parameters": {"type": "object", "properties": {
            "command": {"type": "string"}}, "required": ["command"]}}},
    {"type": "function", "function": {
        "name": "write_file",
        "description": "Write a file of the repository.",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"]}}},
]


def log_uniform(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def text(rng, tokens):
    words = max(1, int(tokens / TOKENS_PER_WORD))
    out = []
    for i in range(words):
        w = rng.choice(WORDS)
        out.append(w)
        if i % 17 == 16:
            out[-1] += "."
    return " ".join(out)


def chat_item(rng, ident, kind):
    tokens = log_uniform(rng, 21, 3500)
    topic = rng.choice(TOPICS)
    body = text(rng, max(1, tokens - 12))
    return {
        "id": ident,
        "set": kind,
        "messages": [{"role": "user", "content": topic + "\n\n" + body}],
        "max_tokens": rng.choice([64, 256]),
        "prompt_tokens_approx": tokens,
    }


def agent_item(rng, ident, kind, tool_call):
    tokens = log_uniform(rng, 300, 8900)
    body = text(rng, max(1, tokens - 60))
    ask = ("Find where the request queue is drained and fix the off-by-one. "
           "TOOL_CALL" if tool_call else
           "Explain in two sentences what this module does.")
    return {
        "id": ident,
        "set": kind,
        "messages": [
            {"role": "system", "content": AGENT_SYSTEM},
            {"role": "user", "content": "Context:\n" + body + "\n\n" + ask},
        ],
        "tools": TOOLS,
        "max_tokens": 256,
        "expect_tool_call": tool_call,
        "prompt_tokens_approx": tokens,
    }


def write(path, items):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for item in items:
            f.write(json.dumps(item, sort_keys=True, separators=(",", ":")))
            f.write("\n")


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    rng = random.Random(SEED)
    chat = [chat_item(rng, "chat-w%d" % i, "warmup") for i in range(WARMUPS)]
    chat += [chat_item(rng, "chat-%03d" % i, "timed") for i in range(TIMED)]
    agent = [agent_item(rng, "agent-w%d" % i, "warmup", i % 2 == 0)
             for i in range(WARMUPS)]
    agent += [agent_item(rng, "agent-%03d" % i, "timed", i % 10 < 7)
              for i in range(TIMED)]
    write(os.path.join(outdir, "chat.jsonl"), chat)
    write(os.path.join(outdir, "agent.jsonl"), agent)


if __name__ == "__main__":
    main()
