#!/usr/bin/env python3
"""ci/real-llama-model.py - write a tiny llama-architecture GGUF for ci/real-llama.

    real-llama-model.py [--split FILE] [--slots N] OUT.gguf

The model is two layers of width 64 with seeded random f32 weights: its
text is nonsense, but llama-server loads it, tokenizes, runs its slots and
streams tokens as it would for a real model, which is what warden
measures. The file is GGUF version 3, written here with Python's standard
library alone (no gguf-py, numpy or sentencepiece), in the keys and value
types gguf-py's GGUFWriter writes for a llama model.

The vocabulary is a small SentencePiece-style one made here: <unk>, the
control tokens <s>, </s> and ChatML's <|im_start|>/<|im_end|>, the 256
byte tokens <0x00>..<0xFF>, then normal tokens: some common English
words with the word-start mark U+2581, printable ASCII characters, each
also with U+2581, and U+2581 alone. llama.cpp's SentencePiece merges reach
only the words whose every prefix is a token (the two-letter ones, and
"and", "not", "her" from them); the rest of a text is a token a character
or so. No tokenizer file is needed.

Two things make it a model the current llama-server answers:

- Only normal tokens can be generated: the output rows (output.weight) of
  every token that is not normal (unknown, control, byte) are zero, so
  their logit is 0 while the best of the 250 normal tokens' is well
  above it. warden asks temperature 0, so the server takes that best
  one; at a temperature above 0 its default top-k (40) still keeps only
  normal tokens, the 40th best of 250 being above 0 too. A byte
  token alone is no UTF-8 (<0xE2> without its continuation), and the
  server's chat parser refused such answers ("does not match the expected
  peg-native format"), 89 of 100 with random rows. (</s> is a control
  token too: every answer runs to its max_tokens.)

- Its context fits the split: the vocabulary cuts text finer than a real
  one, so the script tokenizes every prompt of the split (warmups too)
  the way llama.cpp's SentencePiece tokenizer does with this vocabulary
  (the ChatML template, <s> first, special tokens parsed, a space before
  the text after each), takes the longest prompt plus its max_tokens,
  adds a sixteenth and rounds up to 256: that is each slot's context.
  Its counts are llama-server's: the chat prompts over 8,192 tokens are
  the four of 8,467 to 10,255 tokens that llama-server b9928 refused. The
  model's context length (llama-server's n_ctx when no -c is given, as the
  shipped adapter's chat split runs) is that times the slots
  (the adapter's --parallel), as llama-server divides n_ctx among them.
  A fixed 32768 gave 8192 a slot, and the four chat prompts of 8,467 to
  10,255 tokens were refused (HTTP 400).

Besides OUT.gguf it writes OUT.gguf.json: the figures above
(context_length, slots, slot_context, longest_prompt_tokens and its id,
longest_request_tokens, vocabulary, zeroed_output_rows).

  --split FILE  the workload whose prompts must fit (default: this
                repository's workloads/chat.jsonl)
  --slots N     the server's slots (default: the --parallel of this
                repository's adapters/engines/llama.cpp.json)
"""
import array
import heapq
import json
import math
import os
import random
import struct
import sys

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
N_EMBD, N_LAYER, N_HEAD, N_HEAD_KV, N_FF = 64, 2, 4, 2, 128
SEED = 20261204
WORDS = """the of and to in a is that for it as was with be by on not he I this
are or his from at which but have an they you were her she there been one
all we their has would when if so no will can more about what out up time
model token server engine bench request stream answer question""".split()
# gguf-py's constants: token types, value types, tensor type, file type
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
T_UINT32, T_INT32, T_FLOAT32, T_BOOL, T_STRING, T_ARRAY = 4, 5, 6, 7, 8, 9
GGML_F32, FILE_ALL_F32, ALIGN = 0, 0, 32
TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}"
            "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}"
            "<|im_start|>assistant\n{% endif %}")


def die(msg):
    sys.exit("real-llama-model.py: %s" % msg)


def usage():
    print("usage: real-llama-model.py [--split FILE] [--slots N] OUT.gguf",
          file=sys.stderr)
    sys.exit(2)


# ---- the vocabulary ----

def vocabulary():
    tokens, scores, types = [], [], []

    def add(text, score, kind):
        tokens.append(text)
        scores.append(float(score))
        types.append(kind)

    add("<unk>", 0, UNKNOWN)
    add("<s>", 0, CONTROL)
    add("</s>", 0, CONTROL)
    add("<|im_start|>", 0, CONTROL)
    add("<|im_end|>", 0, CONTROL)
    for b in range(256):
        add("<0x%02X>" % b, 0, BYTE)
    seen = set()
    for i, w in enumerate(WORDS):
        piece = "\u2581" + w
        if piece not in seen:
            seen.add(piece)
            add(piece, -1.0 - i / 100.0, NORMAL)
    for c in range(0x20, 0x7f):
        for piece in (chr(c), "\u2581" + chr(c)):
            if piece not in seen and piece != " " and piece != "\u2581 ":
                seen.add(piece)
                add(piece, -5.0 - c / 1000.0, NORMAL)
    add("\u2581", -4.0, NORMAL)
    return tokens, scores, types


# ---- llama.cpp's SentencePiece tokenizer (llm_tokenizer_spm), this vocabulary ----

class Tokenizer:
    def __init__(self, tokens, scores, types):
        self.id = {t: i for i, t in enumerate(tokens)}
        self.score = scores
        # parsed out of the text first: control, user-defined, unknown
        self.special = sorted((t for t, k in zip(tokens, types)
                               if k in (CONTROL, USER_DEFINED, UNKNOWN)),
                              key=len, reverse=True)

    def count(self, text):
        """Tokens of text as llama-server counts a prompt: <s>, then each
        fragment between special tokens with a space first (add_space_prefix
        after a special token, and at the start), spaces as U+2581."""
        frags = [text]
        for sp in self.special:
            out = []
            for f in frags:
                if isinstance(f, tuple):
                    out.append(f)
                    continue
                parts = f.split(sp)
                for k, p in enumerate(parts):
                    if k > 0:
                        out.append((sp,))
                    if p:
                        out.append(p)
            frags = out
        n, prev_special = 1, True
        for f in frags:
            if isinstance(f, tuple):
                n, prev_special = n + 1, True
                continue
            raw = (" " if prev_special else "") + f
            n += len(self.spm(raw.replace(" ", "\u2581")))
            prev_special = False
        return n

    def spm(self, text):
        sym = list(text)
        nxt = list(range(1, len(sym))) + [-1]
        prv = list(range(-1, len(sym) - 1))
        heap, rev = [], {}

        def bigram(left, right):
            if left == -1 or right == -1:
                return
            t = sym[left] + sym[right]
            if t in self.id:
                heapq.heappush(heap, (-self.score[self.id[t]], left, right, len(t)))

        for i in range(1, len(sym)):
            bigram(i - 1, i)
        while heap:
            _, left, right, size = heapq.heappop(heap)
            if not sym[left] or not sym[right] or len(sym[left]) + len(sym[right]) != size:
                continue
            rev[sym[left] + sym[right]] = (sym[left], sym[right])
            sym[left] += sym[right]
            sym[right] = ""
            nxt[left] = nxt[right]
            if nxt[right] != -1:
                prv[nxt[right]] = left
            bigram(prv[left], left)
            bigram(left, nxt[left])
        out = []

        def resegment(t):
            if t in self.id:
                out.append(self.id[t])
            elif t in rev:
                resegment(rev[t][0])
                resegment(rev[t][1])
            else:
                out.extend(self.id["<0x%02X>" % b] for b in t.encode("utf-8"))

        i = 0 if sym else -1
        while i != -1:
            resegment(sym[i])
            i = nxt[i]
        return out


def chatml(messages):
    text = ""
    for m in messages:
        content = m.get("content") or ""
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        text += "<|im_start|>%s\n%s<|im_end|>\n" % (m.get("role", ""), content)
    return text + "<|im_start|>assistant\n"


def longest(split, tok):
    best = None
    with open(split, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                n = tok.count(chatml(item["messages"]))
                want = n + int(item.get("max_tokens") or 0)
            except (ValueError, KeyError, TypeError) as e:
                die("%s:%d: not a workload line (%s)" % (split, lineno, e))
            if best is None or want > best[0]:
                best = (want, n, item.get("id", "line %d" % lineno))
    if best is None:
        die("%s: no prompt" % split)
    return best


def adapter_slots():
    path = os.path.join(TOP, "adapters", "engines", "llama.cpp.json")
    try:
        argv = json.load(open(path))["serve"]["argv"]
        return int(argv[argv.index("--parallel") + 1])
    except (OSError, ValueError, KeyError, IndexError) as e:
        die("%s: no --parallel N in serve.argv (%s); give --slots" % (path, e))


# ---- GGUF version 3 ----

def gguf_string(b):
    return struct.pack("<Q", len(b)) + b


def gguf_value(kind, v):
    if kind == T_STRING:
        return gguf_string(v.encode("utf-8"))
    return struct.pack({T_UINT32: "<I", T_INT32: "<i", T_FLOAT32: "<f",
                        T_BOOL: "<?"}[kind], v)


def gguf_kv(key, kind, v, elem=None):
    out = gguf_string(key.encode("utf-8")) + struct.pack("<I", kind)
    if kind != T_ARRAY:
        return out + gguf_value(kind, v)
    out += struct.pack("<IQ", elem, len(v))
    return out + b"".join(gguf_value(elem, x) for x in v)


def pad(n):
    return (ALIGN - n % ALIGN) % ALIGN


def write_gguf(path, kvs, tensors):
    """tensors: [(name, shape as numpy gives it, rows first; array('f'))]."""
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs)
    infos, offset = b"", 0
    for name, shape, data in tensors:
        dims = list(reversed(shape))		# ggml's ne: innermost first
        infos += gguf_string(name.encode("utf-8")) + struct.pack("<I", len(dims))
        infos += b"".join(struct.pack("<Q", d) for d in dims)
        infos += struct.pack("<IQ", GGML_F32, offset)
        offset += len(data) * 4
        offset += pad(offset)
    with open(path, "wb") as f:
        f.write(head + infos)
        f.write(b"\0" * pad(len(head) + len(infos)))
        for _, _, data in tensors:
            if sys.byteorder != "little":
                data = array.array("f", data)
                data.byteswap()
            raw = data.tobytes()
            f.write(raw + b"\0" * pad(len(raw)))


def main(argv):
    split = os.path.join(TOP, "workloads", "chat.jsonl")
    slots, out = None, None
    args = list(argv)
    while args:
        a = args.pop(0)
        if a in ("--split", "--slots") and args:
            v = args.pop(0)
            if a == "--split":
                split = v
            else:
                try:
                    slots = int(v)
                except ValueError:
                    slots = 0
                if slots < 1:
                    die("--slots takes a positive number")
        elif out is None and not a.startswith("-"):
            out = a
        else:
            usage()
    if out is None:
        usage()
    if slots is None:
        slots = adapter_slots()

    tokens, scores, types = vocabulary()
    n_vocab = len(tokens)
    want, prompt, prompt_id = longest(split, Tokenizer(tokens, scores, types))
    slot_ctx = (want + want // 16 + 255) // 256 * 256
    n_ctx = slot_ctx * slots

    rng = random.Random(SEED)

    def mat(rows, cols, zero_rows=()):
        s = 1.0 / math.sqrt(cols)
        a = array.array("f", (rng.gauss(0.0, s) for _ in range(rows * cols)))
        for r in zero_rows:
            a[r * cols:(r + 1) * cols] = array.array("f", bytes(4 * cols))
        return ((rows, cols), a)

    def ones(n):
        return ((n,), array.array("f", [1.0] * n))

    not_normal = [i for i, k in enumerate(types) if k != NORMAL]
    kv = N_EMBD // N_HEAD * N_HEAD_KV
    named = [("token_embd.weight", mat(n_vocab, N_EMBD)),
             ("output_norm.weight", ones(N_EMBD)),
             ("output.weight", mat(n_vocab, N_EMBD, not_normal))]
    for i in range(N_LAYER):
        b = "blk.%d." % i
        named += [(b + "attn_norm.weight", ones(N_EMBD)),
                  (b + "attn_q.weight", mat(N_EMBD, N_EMBD)),
                  (b + "attn_k.weight", mat(kv, N_EMBD)),
                  (b + "attn_v.weight", mat(kv, N_EMBD)),
                  (b + "attn_output.weight", mat(N_EMBD, N_EMBD)),
                  (b + "ffn_norm.weight", ones(N_EMBD)),
                  (b + "ffn_gate.weight", mat(N_FF, N_EMBD)),
                  (b + "ffn_down.weight", mat(N_EMBD, N_FF)),
                  (b + "ffn_up.weight", mat(N_FF, N_EMBD))]
    kvs = [gguf_kv("general.architecture", T_STRING, "llama"),
           gguf_kv("general.name", T_STRING, "warden-tiny"),
           gguf_kv("llama.context_length", T_UINT32, n_ctx),
           gguf_kv("llama.embedding_length", T_UINT32, N_EMBD),
           gguf_kv("llama.block_count", T_UINT32, N_LAYER),
           gguf_kv("llama.feed_forward_length", T_UINT32, N_FF),
           gguf_kv("llama.attention.head_count", T_UINT32, N_HEAD),
           gguf_kv("llama.attention.head_count_kv", T_UINT32, N_HEAD_KV),
           gguf_kv("llama.rope.dimension_count", T_UINT32, N_EMBD // N_HEAD),
           gguf_kv("llama.attention.layer_norm_rms_epsilon", T_FLOAT32, 1e-5),
           gguf_kv("general.file_type", T_UINT32, FILE_ALL_F32),
           gguf_kv("tokenizer.ggml.model", T_STRING, "llama"),
           gguf_kv("tokenizer.ggml.tokens", T_ARRAY, tokens, T_STRING),
           gguf_kv("tokenizer.ggml.scores", T_ARRAY, scores, T_FLOAT32),
           gguf_kv("tokenizer.ggml.token_type", T_ARRAY, types, T_INT32),
           gguf_kv("tokenizer.ggml.unknown_token_id", T_UINT32, 0),
           gguf_kv("tokenizer.ggml.bos_token_id", T_UINT32, 1),
           gguf_kv("tokenizer.ggml.eos_token_id", T_UINT32, 2),
           gguf_kv("tokenizer.ggml.add_bos_token", T_BOOL, True),
           gguf_kv("tokenizer.ggml.add_eos_token", T_BOOL, False),
           gguf_kv("tokenizer.chat_template", T_STRING, TEMPLATE)]
    write_gguf(out, kvs, [(name, shape, data) for name, (shape, data) in named])
    facts = {"context_length": n_ctx, "slots": slots, "slot_context": slot_ctx,
             "longest_prompt_tokens": prompt, "longest_prompt_id": prompt_id,
             "longest_request_tokens": want, "split": os.path.abspath(split),
             "vocabulary": n_vocab, "zeroed_output_rows": len(not_normal)}
    with open(out + ".json", "w") as f:
        json.dump(facts, f, indent=2)
        f.write("\n")
    print("%s: llama, %d layers, width %d, vocabulary %d (%d output rows zeroed), "
          "context %d (%d slots of %d; longest request %d tokens: %s, "
          "prompt %d)" % (out, N_LAYER, N_EMBD, n_vocab, len(not_normal), n_ctx,
                          slots, slot_ctx, want, prompt_id, prompt))


if __name__ == "__main__":
    main(sys.argv[1:])
