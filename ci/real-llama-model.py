#!/usr/bin/env python3
"""ci/real-llama-model.py - write a tiny llama-architecture GGUF for ci/real-llama.

    real-llama-model.py LLAMA_TREE OUT.gguf

Uses the gguf-py package of the llama.cpp tree given (LLAMA_TREE/gguf-py),
so the file is written the way that llama.cpp reads it. The model is two
layers of width 64 with seeded random f32 weights: its text is nonsense,
but llama-server loads it, tokenizes, runs its slots and streams tokens as
it would for a real model, which is what warden measures. The vocabulary
is a small SentencePiece-style one made here (control tokens, ChatML's
<|im_start|>/<|im_end|>, the 256 byte tokens, printable characters and
common English words), so no tokenizer file is needed. That vocabulary
cuts text finer than a real one, so the context is 32768 tokens: with the
adapter's four slots, 8192 each, more than the chat split's prompts take
(at 4096, 1024 a slot, llama-server refused the longest prompts: "Input
prompt is too big compared to KV size").
"""
import os
import sys

if len(sys.argv) != 3:
    sys.exit("usage: real-llama-model.py LLAMA_TREE OUT.gguf")
tree, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(tree, "gguf-py"))
try:
    import numpy as np
    import gguf
except ImportError as e:
    sys.exit("real-llama-model.py: %s (gguf-py needs numpy, and sentencepiece "
             "on older trees: apt-get install python3-numpy python3-sentencepiece)" % e)

N_EMBD, N_LAYER, N_HEAD, N_HEAD_KV, N_FF, N_CTX = 64, 2, 4, 2, 128, 32768
WORDS = """the of and to in a is that for it as was with be by on not he I this
are or his from at which but have an they you were her she there been one
all we their has would when if so no will can more about what out up time
model token server engine bench request stream answer question""".split()

tokens, scores, types = [], [], []
T = gguf.TokenType


def add(text, score, kind):
    tokens.append(text.encode("utf-8"))
    scores.append(float(score))
    types.append(int(kind))


add("<unk>", 0, T.UNKNOWN)
add("<s>", 0, T.CONTROL)
add("</s>", 0, T.CONTROL)
add("<|im_start|>", 0, T.CONTROL)
add("<|im_end|>", 0, T.CONTROL)
for b in range(256):
    add("<0x%02X>" % b, 0, T.BYTE)
seen = set()
for i, w in enumerate(WORDS):
    piece = "\u2581" + w
    if piece not in seen:
        seen.add(piece)
        add(piece, -1.0 - i / 100.0, T.NORMAL)
for c in range(0x20, 0x7f):
    for piece in (chr(c), "\u2581" + chr(c)):
        if piece not in seen and piece != " " and piece != "\u2581 ":
            seen.add(piece)
            add(piece, -5.0 - c / 1000.0, T.NORMAL)
add("\u2581", -4.0, T.NORMAL)
n_vocab = len(tokens)

w = gguf.GGUFWriter(out, "llama")
w.add_name("warden-tiny")
w.add_context_length(N_CTX)
w.add_embedding_length(N_EMBD)
w.add_block_count(N_LAYER)
w.add_feed_forward_length(N_FF)
w.add_head_count(N_HEAD)
w.add_head_count_kv(N_HEAD_KV)
w.add_rope_dimension_count(N_EMBD // N_HEAD)
w.add_layer_norm_rms_eps(1e-5)
w.add_file_type(gguf.LlamaFileType.ALL_F32)
w.add_tokenizer_model("llama")
w.add_token_list(tokens)
w.add_token_scores(scores)
w.add_token_types(types)
w.add_unk_token_id(0)
w.add_bos_token_id(1)
w.add_eos_token_id(2)
w.add_add_bos_token(True)
w.add_add_eos_token(False)
w.add_chat_template(
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")

rng = np.random.default_rng(20261204)


def mat(rows, cols):
    return (rng.standard_normal((rows, cols)) / np.sqrt(cols)).astype(np.float32)


kv = N_EMBD // N_HEAD * N_HEAD_KV
w.add_tensor("token_embd.weight", mat(n_vocab, N_EMBD))
w.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
w.add_tensor("output.weight", mat(n_vocab, N_EMBD))
for i in range(N_LAYER):
    b = "blk.%d." % i
    w.add_tensor(b + "attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    w.add_tensor(b + "attn_q.weight", mat(N_EMBD, N_EMBD))
    w.add_tensor(b + "attn_k.weight", mat(kv, N_EMBD))
    w.add_tensor(b + "attn_v.weight", mat(kv, N_EMBD))
    w.add_tensor(b + "attn_output.weight", mat(N_EMBD, N_EMBD))
    w.add_tensor(b + "ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    w.add_tensor(b + "ffn_gate.weight", mat(N_FF, N_EMBD))
    w.add_tensor(b + "ffn_down.weight", mat(N_EMBD, N_FF))
    w.add_tensor(b + "ffn_up.weight", mat(N_FF, N_EMBD))
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
print("%s: llama, %d layers, width %d, vocabulary %d, context %d" %
      (out, N_LAYER, N_EMBD, n_vocab, N_CTX))
