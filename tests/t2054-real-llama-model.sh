#!/bin/sh
# t2054: what ci/real-llama needs of its model and verdict, tested without
# a llama-server: ci/real-llama-model.py writes a GGUF (read back here by
# a reader of this test's own) whose non-normal tokens (unknown, control,
# byte) have zero output rows, so the server never generates a lone byte
# (invalid UTF-8), and whose context holds the chat split's longest
# request in each of the adapter's slots; `ci/real-llama --verdict` fails
# a run whose sweeps are under the gate's completion line.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"

# A GGUF reader of the test's own (read_gguf.py): the header, the
# metadata, the tensor infos and the f32 data, as GGUF version 3 lays
# them out.
test_expect_success 'the model script writes a GGUF and its figures' '
	cat >read_gguf.py <<-\PY &&
	import struct, sys
	def read(path):
	    b = open(path, "rb").read()
	    o = 0
	    def take(fmt):
	        nonlocal o
	        v = struct.unpack_from("<" + fmt, b, o)
	        o += struct.calcsize("<" + fmt)
	        return v[0] if len(v) == 1 else v
	    def string():
	        nonlocal o
	        n = take("Q")
	        s = b[o:o + n].decode("utf-8")
	        o += n
	        return s
	    scalar = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f",
	              7: "?", 10: "Q", 11: "q", 12: "d"}
	    def value(t):
	        if t == 8:
	            return string()
	        if t == 9:
	            et, n = take("I"), take("Q")
	            return (et, [value(et) for _ in range(n)])
	        return take(scalar[t])
	    assert b[:4] == b"GGUF", b[:4]
	    o = 4
	    version, ntensors, nkv = take("I"), take("Q"), take("Q")
	    kv, types = {}, {}
	    for _ in range(nkv):
	        k = string()
	        t = take("I")
	        kv[k], types[k] = value(t), t
	    infos = []
	    for _ in range(ntensors):
	        name = string()
	        dims = [take("Q") for _ in range(take("I"))]
	        infos.append((name, dims, take("I"), take("Q")))
	    align = kv.get("general.alignment", 32)
	    start = (o + align - 1) // align * align
	    tensors = {}
	    for name, dims, t, off in infos:
	        assert t == 0 and off % align == 0, (name, t, off)
	        n = 1
	        for d in dims:
	            n *= d
	        assert start + off + 4 * n <= len(b), name
	        tensors[name] = (dims, struct.unpack_from("<%df" % n, b, start + off))
	    return version, kv, types, tensors
	PY
	python3 "$TOP_SRCDIR/ci/real-llama-model.py" tiny.gguf >model.out &&
	cat model.out &&
	test -s tiny.gguf && test -s tiny.gguf.json &&
	expect_grep "^tiny.gguf: llama, 2 layers, width 64" model.out
'

test_expect_success 'a GGUF version 3 of a llama with the vocabulary and template' '
	python3 - tiny.gguf <<-\PY
	import json, sys
	sys.path.insert(0, ".")
	from read_gguf import read
	version, kv, types, t = read(sys.argv[1])
	facts = json.load(open(sys.argv[1] + ".json"))
	assert version == 3, version
	assert kv["general.architecture"] == "llama"
	assert kv["tokenizer.ggml.model"] == "llama"
	assert kv["llama.context_length"] == facts["context_length"]
	assert types["llama.context_length"] == 4      # uint32, as gguf-py writes it
	et, toks = kv["tokenizer.ggml.tokens"]
	tt, ttypes = kv["tokenizer.ggml.token_type"]
	assert et == 8 and tt == 5, (et, tt)           # strings; int32
	assert len(toks) == len(ttypes) == facts["vocabulary"]
	assert "<|im_start|>" in kv["tokenizer.chat_template"]
	assert t["output.weight"][0] == [64, len(toks)], t["output.weight"][0]
	assert t["token_embd.weight"][0] == [64, len(toks)]
	assert len(t) == 3 + 2 * 9, sorted(t)
	PY
'

test_expect_success 'no token but a normal one has a non-zero output row' '
	python3 - tiny.gguf <<-\PY
	import json, sys
	sys.path.insert(0, ".")
	from read_gguf import read
	_, kv, _, t = read(sys.argv[1])
	toks = kv["tokenizer.ggml.tokens"][1]
	ttypes = kv["tokenizer.ggml.token_type"][1]
	dims, out = t["output.weight"]
	width = dims[0]
	rows = [out[i * width:(i + 1) * width] for i in range(dims[1])]
	odd = [i for i, k in enumerate(ttypes) if k != 1]
	assert len(odd) == 261, len(odd)           # <unk>, 4 control, 256 bytes
	assert all(toks[i].startswith("<0x") for i in odd if ttypes[i] == 6)
	bad = [toks[i] for i in odd if any(rows[i])]
	assert not bad, "non-normal tokens with an output row: %s" % bad[:8]
	dead = [toks[i] for i, k in enumerate(ttypes) if k == 1 and not any(rows[i])]
	assert not dead, dead[:8]
	assert all(ord(c) < 0x80 or c == "\u2581" for i, k in enumerate(ttypes)
	           if k == 1 for c in toks[i]), "a normal token outside ASCII"
	emb = t["token_embd.weight"][1]
	assert all(any(emb[i * width:(i + 1) * width]) for i in odd)
	assert json.load(open(sys.argv[1] + ".json"))["zeroed_output_rows"] == 261
	PY
'

# The script's tokenizer counts as llama-server does: against this
# vocabulary llama-server b9928 refused four chat prompts over 8,192
# tokens, of 8,467 to 10,255 tokens (its HTTP 400 said so).
test_expect_success 'prompts counted as llama-server counts them' '
	python3 - "$TOP_SRCDIR" <<-\PY
	import importlib.util, json, sys
	top = sys.argv[1]
	spec = importlib.util.spec_from_file_location("model", top + "/ci/real-llama-model.py")
	m = importlib.util.module_from_spec(spec)
	spec.loader.exec_module(m)
	tok = m.Tokenizer(*m.vocabulary())
	n = sorted(tok.count(m.chatml(json.loads(l)["messages"]))
	           for l in open(top + "/workloads/chat.jsonl"))
	big = [x for x in n if x > 8192]
	assert len(big) == 4 and big[0] == 8467 and big[-1] == 10255, big
	# <s>, <|im_start|>, "\u2581u" "s" "e" "r" <0x0A> "h" "i", <|im_end|>,
	# "\u2581" <0x0A> (a space before the text after a special token)
	assert tok.count("<|im_start|>user\nhi<|im_end|>\n") == 12, \
	    tok.count("<|im_start|>user\nhi<|im_end|>\n")
	PY
'

test_expect_success 'each slot holds the chat split s longest prompt and its max_tokens' '
	python3 - tiny.gguf "$TOP_SRCDIR" <<-\PY
	import importlib.util, json, sys
	sys.path.insert(0, ".")
	from read_gguf import read
	_, kv, _, _ = read(sys.argv[1])
	top = sys.argv[2]
	spec = importlib.util.spec_from_file_location("model", top + "/ci/real-llama-model.py")
	m = importlib.util.module_from_spec(spec)
	spec.loader.exec_module(m)
	tok = m.Tokenizer(*m.vocabulary())
	argv = json.load(open(top + "/adapters/engines/llama.cpp.json"))["serve"]["argv"]
	slots = int(argv[argv.index("--parallel") + 1])
	longest = max(tok.count(m.chatml(d["messages"])) + d["max_tokens"]
	              for d in map(json.loads, open(top + "/workloads/chat.jsonl")))
	ctx = kv["llama.context_length"]
	print("context %d, %d slots of %d; longest request %d" % (ctx, slots, ctx // slots, longest))
	assert ctx // slots >= longest, (ctx, slots, longest)
	facts = json.load(open(sys.argv[1] + ".json"))
	assert facts["longest_request_tokens"] == longest, (facts, longest)
	assert facts["slots"] == slots
	PY
'

test_expect_success 'a split and a slot count of the caller s, and bad arguments' '
	printf "%s\n" "{\"id\": \"x\", \"max_tokens\": 1000, \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}" >one.jsonl &&
	python3 "$TOP_SRCDIR/ci/real-llama-model.py" --split one.jsonl --slots 2 small.gguf >/dev/null &&
	python3 -c "
import json; f = json.load(open(\"small.gguf.json\"))
assert f[\"slots\"] == 2 and f[\"slot_context\"] == 1280 and f[\"context_length\"] == 2560, f" &&
	expect_exit 2 python3 "$TOP_SRCDIR/ci/real-llama-model.py" &&
	printf "not json\n" >bad.jsonl &&
	expect_exit 1 python3 "$TOP_SRCDIR/ci/real-llama-model.py" --split bad.jsonl x.gguf &&
	expect_grep "bad.jsonl:1: not a workload line" err
'

# real_run DIR ENGINE CYCLE_EXIT: a scratch directory as ci/real-llama
# leaves it, its campaign run against ENGINE of the simulated engine.
real_run() {
	mkdir -p "$1" &&
	(cd "$1" && bench_init bench &&
	 sim_adapter bench "$2" $SIMARGS &&
	 bench_policy bench "campaign.concurrency=[1, 4]" &&
	 (cd bench && warden campaign --limit 20 --run-id real-campaign \
	     >/dev/null 2>&1 &&
	  warden --json campaign show real-campaign) >campaign.json &&
	 printf "{\"cycle_exit\": \"%s\"}\n" "$3" >run.json)
}

test_expect_success 'the verdict: sweeps over the gate s completion line pass' '
	SIMARGS="--itl 1 --prefill-rate 50000" real_run good simgood 1 &&
	expect_exit 0 "$TOP_SRCDIR/ci/real-llama" --verdict good &&
	expect_grep "^sweeps under the gate.s completion line (90/100): 0 of 2$" out &&
	expect_grep "^| 4 | complete | 20/20 | 3/3 |" out &&
	test -s good/figures.md
'

test_expect_success 'the verdict: sweeps under the line fail, though every request was answered' '
	SIMARGS="--itl 1 --prefill-rate 50000 --fail-rate 0.5 --seed 3" real_run poor simpoor 1 &&
	expect_exit 1 "$TOP_SRCDIR/ci/real-llama" --verdict poor &&
	expect_grep "^  real-campaign c=1: complete, [0-9]*/20 completed$" out &&
	expect_grep "^failed without an answer from the engine: 0$" out &&
	expect_grep "sweeps\{0,1\} under the gate.s completion line (90/100)" err
'

test_expect_success 'the verdict: a cycle that ended in an environment error fails' '
	printf "{\"cycle_exit\": \"3\"}\n" >good/run.json &&
	expect_exit 1 "$TOP_SRCDIR/ci/real-llama" --verdict good &&
	expect_grep "the cycle exited 3" err
'

test_expect_success 'the verdict: llama-server reporting the bench s commit as its build fails' '
	printf "{\"cycle_exit\": \"0\", \"server_version\": \"version: 1 (4dddc0a)\", \"bench_commit\": \"4dddc0a1234\"}\n" >good/run.json &&
	expect_exit 1 "$TOP_SRCDIR/ci/real-llama" --verdict good &&
	expect_grep "names the bench.s commit" err &&
	expect_exit 2 "$TOP_SRCDIR/ci/real-llama" --verdict
'

# versions.json as `warden --json versions llama.cpp` writes it.
test_expect_success 'the verdict: the version must name the engine s own commit' '
	printf "{\"llama.cpp\": {\"source\": {\"commit\": \"9f3ab21c0d4e5f60718293a4b5c6d7e8f9012345\"}}}\n" >good/versions.json &&
	printf "{\"cycle_exit\": \"1\", \"server_version\": \"version: 9930 (9f3ab21) built with cc for x86_64-linux-gnu\", \"bench_commit\": \"4dddc0a1234\"}\n" >good/run.json &&
	expect_exit 0 "$TOP_SRCDIR/ci/real-llama" --verdict good &&
	expect_grep "^llama-server --version: version: 9930 (9f3ab21)" out &&
	printf "{\"cycle_exit\": \"1\", \"server_version\": \"version: 9928 (1a2b3c4) built with cc for x86_64-linux-gnu\", \"bench_commit\": \"4dddc0a1234\"}\n" >good/run.json &&
	expect_exit 1 "$TOP_SRCDIR/ci/real-llama" --verdict good &&
	expect_grep "names no prefix of the engine.s commit 9f3ab21c0d4e: version: 9928 (1a2b3c4)" err
'

test_expect_success 'the verdict of a directory no run left names what is missing' '
	mkdir empty &&
	expect_exit 1 "$TOP_SRCDIR/ci/real-llama" --verdict empty &&
	expect_grep "^ci/real-llama: empty/run.json: " err &&
	cp good/run.json good/campaign.json empty/ && mkdir -p empty/bench/policy &&
	cp good/bench/policy/warden.json empty/bench/policy/ &&
	expect_exit 1 "$TOP_SRCDIR/ci/real-llama" --verdict empty &&
	expect_grep "^ci/real-llama: empty/bench/.warden/warden.db: " err &&
	test ! -e empty/bench/.warden/warden.db
'

test_done
