#!/bin/sh
# t8001: the nine SiliconBench adapters and three profiles of this
# repository, run by `warden campaign` against stand-ins installed where
# each adapter expects its engine's program (tests/fixtures/engines/
# stand-in.py plays the engine's command line: it listens where it is
# told, loads only weights that exist, and lists in /v1/models what the
# real engine would). What SiliconBench's own scripts do, warden must do:
# the arguments and environment each engine gets per split, the steps
# around ollama and omlx, thinking off and no tools on every request, and
# a model an engine does not serve recorded as skipped, not measured.
. "$TOP_SRCDIR/tests/lib.sh"

STAND_IN="$TOP_SRCDIR/tests/fixtures/engines/stand-in.py"
STAND_IN_DIR="$TEST_DIR/stand-in"
export STAND_IN_DIR

# stand_in PATH ENGINE: a program at PATH that runs the stand-in as ENGINE.
stand_in() {
	mkdir -p "$(dirname "$1")"
	printf '#!/bin/sh\nexec python3 "%s" %s "$@"\n' "$STAND_IN" "$2" >"$1"
	chmod +x "$1"
}

# double NAME: a program NAME on PATH that records its argv and exits 1
# (nothing to stop here), as pkill, pgrep and launchctl do on this machine.
double() {
	printf '#!/bin/sh\necho "%s $*" >>"%s/doubles"\nexit 1\n' "$1" \
	    "$STAND_IN_DIR" >"$TEST_DIR/bin/$1"
	chmod +x "$TEST_DIR/bin/$1"
}

test_expect_success 'a copy of this repository with stand-ins for the nine engines' '
	mkdir -p "$STAND_IN_DIR" bin &&
	make_bench_repo bench &&
	rm -f bench/adapters/engines/*.json bench/adapters/profiles/*.json &&
	cp "$TOP_SRCDIR"/adapters/engines/*.json bench/adapters/engines/ &&
	cp "$TOP_SRCDIR"/adapters/profiles/*.json bench/adapters/profiles/ &&
	cp "$TOP_SRCDIR"/policy/warden.json bench/policy/ &&
	cp "$TOP_SRCDIR"/workloads/chat.jsonl "$TOP_SRCDIR"/workloads/agent.jsonl \
	    bench/workloads/ &&
	(cd bench && git add -A && git commit -qm "SiliconBench adapters") &&
	e=bench/.warden/envs &&
	stand_in $e/llama.cpp/src/build/bin/llama-server llama.cpp &&
	stand_in bin/ollama ollama &&
	stand_in $e/mlx_lm/venv/bin/python mlx_lm &&
	stand_in $e/vllm-metal/home/.venv-vllm-metal/bin/vllm vllm-metal &&
	stand_in $e/vllm-mlx/venv/bin/vllm-mlx vllm-mlx &&
	stand_in $e/omlx/venv/bin/omlx omlx &&
	stand_in $e/sglang/venv/bin/python sglang &&
	stand_in $e/hf_transformers/venv/bin/transformers hf_transformers &&
	stand_in $e/mistral.rs/src/target/release/mistralrs mistral.rs &&
	double pkill && double pgrep && double launchctl &&
	m=bench/.warden/models && mkdir -p $m &&
	for w in Qwen3-0.6B Qwen3.5-0.8B gemma-4-E4B-it; do
		echo gguf >$m/$w-BF16.gguf || return 1
	done &&
	mkdir -p $m/Qwen3-0.6B $m/Qwen3.5-0.8B $m/Gemma-4-E4B-it \
	    $m/Qwen3-0.6B-bf16-mlx $m/Qwen3.5-0.8B-bf16-mlx $m/gemma-4-e4b-it-bf16-mlx &&
	mkdir -p $e/ollama/home/.ollama &&
	echo qwen3:0.6b-fp16 >$e/ollama/home/.ollama/stand-in-pulled
'

test_expect_success 'warden lint passes on the nine adapters and three profiles' '
	cd bench &&
	expect_exit 0 "$WARDEN" lint &&
	expect_grep "0 problems" err
'

test_expect_success 'the campaign runs every engine, model and split' '
	cd bench &&
	PATH="$TEST_DIR/bin:$PATH" "$WARDEN" campaign --limit 2 \
	    --concurrency 2 --run-id sb >out 2>err &&
	sqlite3 .warden/warden.db "select engine, model, split, outcome from campaign_sweeps where run_id = '"'"'sb'"'"' order by seq" >sweeps &&
	test $(wc -l <sweeps) -eq 54 &&
	grep -v "|complete$" sweeps >not-complete || : &&
	printf "%s\n" "ollama|qwen3.5-0.8b|chat|skipped" \
	    "ollama|qwen3.5-0.8b|agent|skipped" \
	    "ollama|gemma-4-e4b-it|chat|skipped" \
	    "ollama|gemma-4-e4b-it|agent|skipped" >want &&
	expect_equal want not-complete
'

test_expect_success 'a model ollama has no tag for is skipped with the reason, never started' '
	cd bench &&
	sqlite3 .warden/warden.db "select detail from campaign_sweeps where run_id = '"'"'sb'"'"' and engine = '"'"'ollama'"'"' and model = '"'"'gemma-4-e4b-it'"'"'" >detail &&
	expect_grep "engine .ollama. does not serve this model: ollama has no Gemma 4 tag" detail &&
	test "$(grep -c "\"engine\": \"ollama\"" "$STAND_IN_DIR/calls.jsonl")" -eq 2
'

# check PY: run a Python check over the recorded calls and requests.
check() {
	python3 - "$STAND_IN_DIR" "$1" <<'PY'
import json, sys
d, expr = sys.argv[1], sys.argv[2]
calls = [json.loads(l) for l in open(d + "/calls.jsonl")]
reqs = [json.loads(l) for l in open(d + "/requests.jsonl")]
def of(engine):
    return [c for c in calls if c["engine"] == engine]
def after(argv, opt):
    return [argv[i + 1] for i in range(len(argv) - 1) if argv[i] == opt]
ok = True
exec(expr)
sys.exit(0 if ok else 1)
PY
}

test_expect_success 'llama.cpp: 4 slots and the model context on chat, 4 x 16384 on agent, -ngl 99' '
	check "
for c in of(\"llama.cpp\"):
    a = c[\"argv\"]
    assert a.count(\"--parallel\") == 1 and after(a, \"--parallel\") == [\"4\"], a
    assert after(a, \"-ngl\") == [\"99\"], a
    assert after(a, \"-c\") in ([], [\"65536\"]), a
    assert after(a, \"-m\")[0].endswith(\"/.warden/models/\" + after(a, \"--alias\")[0] + \".gguf\"), a
n_agent = sum(1 for c in of(\"llama.cpp\") if after(c[\"argv\"], \"-c\") == [\"65536\"])
assert n_agent == 3 and len(of(\"llama.cpp\")) == 6, (n_agent, len(of(\"llama.cpp\")))
"
'

test_expect_success 'ollama: 16 parallel, keep-alive, 16384 context, its own service stopped first' '
	check "
for c in of(\"ollama\"):
    e = c[\"env\"]
    assert e[\"OLLAMA_NUM_PARALLEL\"] == \"16\" and e[\"OLLAMA_KEEP_ALIVE\"] == \"10m\", e
    assert e[\"OLLAMA_CONTEXT_LENGTH\"] == \"16384\", e
    assert c[\"argv\"] == [\"serve\"], c
" &&
	test "$(grep -c "^pkill -f ollama serve$" "$STAND_IN_DIR/doubles")" -eq 2 &&
	test "$(grep -c "^launchctl stop com.ollama$" "$STAND_IN_DIR/doubles")" -eq 2
'

test_expect_success 'sglang runs its MLX backend with SiliconBench arguments' '
	check "
for c in of(\"sglang\"):
    a = c[\"argv\"]
    assert c[\"env\"][\"SGLANG_USE_MLX\"] == \"1\", c[\"env\"]
    assert a[:2] == [\"-m\", \"sglang.launch_server\"], a
    for f in (\"--trust-remote-code\", \"--disable-radix-cache\", \"--disable-cuda-graph\"):
        assert f in a, (f, a)
    assert after(a, \"--tp-size\") == [\"1\"] and \"--context-length\" not in a, a
"
'

test_expect_success 'vllm-metal: paged attention, prefix caching, 4096 chat and 16384 agent' '
	check "
lens = sorted(after(c[\"argv\"], \"--max-model-len\")[0] for c in of(\"vllm-metal\"))
assert lens == [\"16384\"] * 3 + [\"4096\"] * 3, lens
for c in of(\"vllm-metal\"):
    assert c[\"env\"][\"VLLM_METAL_USE_PAGED_ATTENTION\"] == \"1\", c[\"env\"]
    assert \"VLLM_METAL_MEMORY_FRACTION\" in c[\"env\"] and \"--enable-prefix-caching\" in c[\"argv\"]
"
'

test_expect_success 'omlx serves a directory of one model, with the RAM cache, fresh per start' '
	check "
dirs = set()
for c in of(\"omlx\"):
    a = c[\"argv\"]
    assert c[\"env\"][\"OMLX_HOT_CACHE_ONLY\"] == \"true\", c[\"env\"]
    assert after(a, \"--hot-cache-max-size\") == [\"8GB\"], a
    assert after(a, \"--paged-ssd-cache-dir\")[0].endswith(\"/scratch/cache\"), a
    dirs.add(after(a, \"--model-dir\")[0])
assert len(dirs) == 1 and list(dirs)[0].endswith(\"/envs/omlx/scratch/models\"), dirs
" &&
	test ! -e bench/.warden/envs/omlx/scratch &&
	grep "stand-in omlx serving" bench/.warden/logs/sb/omlx/gemma-4-e4b-it/chat-c2-*.log >served &&
	expect_grep "serving \[.gemma-4-e4b-it-bf16-mlx.\] on" served
'

test_expect_success 'vllm-mlx, mlx_lm, hf_transformers and mistral.rs as SiliconBench starts them' '
	check "
for c in of(\"vllm-mlx\"):
    assert \"--continuous-batching\" in c[\"argv\"], c
for c in of(\"mlx_lm\"):
    assert c[\"argv\"][:2] == [\"-m\", \"mlx_lm.server\"], c
for c in of(\"hf_transformers\"):
    a = c[\"argv\"]
    assert after(a, \"--device\") == [\"mps\"] and after(a, \"--dtype\") == [\"bfloat16\"], a
    assert after(a, \"--attn-implementation\") == [\"sdpa\"] and \"--continuous-batching\" in a, a
    assert c[\"env\"][\"PYTORCH_ENABLE_MPS_FALLBACK\"] == \"1\", c[\"env\"]
for c in of(\"mistral.rs\"):
    a = c[\"argv\"]
    assert a[0] == \"serve\" and after(a, \"--format\") == [\"gguf\"], a
    assert after(a, \"-f\")[0].startswith(\"/\") and \"--max-seqs\" not in a, a
    assert c[\"cwd\"].endswith(\"/.warden/models\"), c
models = sorted(set(r[\"body\"][\"model\"] for r in reqs if r[\"engine\"] == \"mlx_lm\"))
assert \"mlx-community/gemma-4-e4b-it-bf16\" in models, models
"
'

test_expect_success 'every request turns thinking off, Gemma too, and sends no tools' '
	check "
assert len(reqs) >= 50 * 3, len(reqs)
for r in reqs:
    b = r[\"body\"]
    assert b[\"chat_template_kwargs\"] == {\"enable_thinking\": False}, r
    assert \"tools\" not in b, r
gemma = [r for r in reqs if \"emma\" in r[\"body\"][\"model\"]]
assert len(gemma) >= 8 * 2 * 3, len(gemma)
"
'

test_expect_success 'policy campaign.send_tools sends the workload tools on the agent split' '
	cd bench &&
	: >"$STAND_IN_DIR/requests.jsonl" &&
	python3 -c "import json; p = json.load(open(\"policy/warden.json\")); p[\"campaign\"][\"send_tools\"] = True; json.dump(p, open(\"policy/warden.json\", \"w\"))" &&
	PATH="$TEST_DIR/bin:$PATH" "$WARDEN" campaign --engine vllm-mlx \
	    --model qwen3-0.6b --limit 2 --concurrency 1 --run-id tools >out 2>err &&
	check "
agent = [r for r in reqs if any(\"TOOL_CALL\" in str(m) or \"coding agent\" in str(m) for m in r[\"body\"][\"messages\"])]
assert agent and all(\"tools\" in r[\"body\"] for r in agent), len(agent)
chat = [r for r in reqs if r not in agent]
assert chat and all(\"tools\" not in r[\"body\"] for r in chat), len(chat)
"
'

test_expect_success 'no stand-in is left running' '
	! pgrep -f "$STAND_IN" >/dev/null
'

test_expect_success 'llama.cpp: the source its notes describe, the job count left to warden' '
	python3 - "$TOP_SRCDIR/adapters/engines/llama.cpp.json" <<-\PY
	import json, sys
	a = json.load(open(sys.argv[1])); s = a["source"]; n = a["notes"]
	assert s["track"] == "tag" and s["ref"] == "b*", s
	assert "tracks the release tags b*" in n, n
	assert "branch master, build" not in n and "-j N" not in n, n
	configure, build = s["build"]
	assert configure[:3] == ["cmake", "-B", "build"], configure
	assert "-DLLAMA_BUILD_WEBUI=OFF" in configure, configure
	assert build[:3] == ["cmake", "--build", "build"], build
	assert build[build.index("--config") + 1] == "Release", build
	assert "-j" not in build and "--parallel" not in build, build
	for step in s["build"]:
	    assert " ".join(step) in n, (step, n)
	PY
'

test_done
