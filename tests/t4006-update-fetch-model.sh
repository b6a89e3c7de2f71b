#!/bin/sh
# t4006: the nine SiliconBench adapters' fetch_model, run by `warden update`
# against test doubles of `hf` and `ollama` on PATH that record their argv
# and write weights (no network): each adapter's argv after placeholder
# expansion, the weights hashed and recorded per model (a file, a
# directory, a Hugging Face cache snapshot of links, ollama's manifest
# digest), and a directory whose digest differs from the profile stopping
# that engine's update with the directory and both digests.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"

ENGINES="llama.cpp ollama mlx_lm vllm-mlx vllm-metal omlx sglang hf_transformers mistral.rs"
FAKE_HF_DIR="$TEST_DIR/hf"
FAKE_OLLAMA_DIR="$TEST_DIR/ollama"
export FAKE_HF_DIR FAKE_OLLAMA_DIR
mkdir -p "$TEST_DIR/bin" "$FAKE_HF_DIR" "$FAKE_OLLAMA_DIR"
cp "$TOP_SRCDIR/tests/fixtures/update/fake-hf" "$TEST_DIR/bin/hf"
cp "$TOP_SRCDIR/tests/fixtures/update/fake-ollama" "$TEST_DIR/bin/ollama"
PATH="$TEST_DIR/bin:$PATH"
export PATH

# dir_digest DIR: the directory digest warden-update(1) defines, computed
# with the shell tools doc/update.md names.
dir_digest() {
	(cd "$1" && find -L . -name '.?*' -prune -o -type f -print |
	    sed 's|^\./||' | LC_ALL=C sort |
	    while read -r f; do sha256sum "$f"; done) | sha256sum | cut -d" " -f1
}

# model ENGINE FIELD: the field of qwen3-0.6b in ENGINE's current manifest.
model() {
	(cd "$TEST_DIR/bench" && warden --json versions "$1") | python3 -c '
import json, sys
m = list(json.load(sys.stdin).values())[0]["models"]["qwen3-0.6b"]
print(m.get(sys.argv[1], ""))' "$2"
}

test_expect_success 'the real adapters and profile, their sources made local' '
	bench_init bench &&
	mkdir -p bench/adapters/engines/fetch &&
	cp "$TOP_SRCDIR"/adapters/engines/fetch/*.sh bench/adapters/engines/fetch/ &&
	cp "$TOP_SRCDIR/adapters/profiles/qwen3-0.6b.json" bench/adapters/profiles/ &&
	for e in $ENGINES; do
		python3 - "$TOP_SRCDIR/adapters/engines/$e.json" "bench/adapters/engines/$e.json" <<-PY || exit 1
		import json, sys
		a = json.load(open(sys.argv[1]))
		assert a["fetch_model"], a["name"]
		# no git, pip or brew here: only fetch_model is under test
		a["source"] = {"kind": "none", "version_argv": ["warden-simengine", "--help"]}
		json.dump(a, open(sys.argv[2], "w"), indent=2)
		PY
	done &&
	bench_policy bench "rosters={\"test\": [$(echo $ENGINES | sed "s/\([^ ]*\)/\"\1\"/g; s/ /, /g")]}" &&
	(cd bench && warden lint)
'

test_expect_success 'update runs each fetch_model with its placeholders expanded' '
	cd bench && B=$(pwd) &&
	expect_exit 0 warden update &&
	cd .. &&
	M="$B/.warden/models" && H="$B/.warden/envs" &&
	cat >calls.want <<-EOF &&
	download unsloth/Qwen3-0.6B-GGUF Qwen3-0.6B-BF16.gguf --local-dir $M
	download mlx-community/Qwen3-0.6B-bf16 --cache-dir $H/mlx_lm/home/.cache/huggingface/hub
	download mlx-community/Qwen3-0.6B-bf16 --cache-dir $H/vllm-mlx/home/.cache/huggingface/hub
	download Qwen/Qwen3-0.6B --cache-dir $H/vllm-metal/home/.cache/huggingface/hub
	download mlx-community/Qwen3-0.6B-bf16 --local-dir $M/Qwen3-0.6B-bf16-mlx
	download Qwen/Qwen3-0.6B --cache-dir $H/sglang/home/.cache/huggingface/hub
	download Qwen/Qwen3-0.6B --cache-dir $H/hf_transformers/home/.cache/huggingface/hub
	download unsloth/Qwen3-0.6B-GGUF Qwen3-0.6B-BF16.gguf --local-dir $M
	download Qwen/Qwen3-0.6B --local-dir $M/Qwen3-0.6B
	EOF
	expect_equal calls.want hf/calls &&
	grep -v "^list" ollama/calls | sed "s/127.0.0.1:[0-9]*$/127.0.0.1:PORT/" >ollama.got &&
	cat >ollama.want <<-EOF &&
	serve HOME=$H/ollama/home OLLAMA_HOST=127.0.0.1:PORT
	pull qwen3:0.6b-fp16 HOME=$H/ollama/home OLLAMA_HOST=127.0.0.1:PORT
	EOF
	expect_equal ollama.want ollama.got &&
	test ! -e "$H/ollama/home/.fake-ollama-up"
'

test_expect_success 'a weight file is hashed; a GGUF and a directory for mistral.rs' '
	B="$TEST_DIR/bench" && M="$B/.warden/models" &&
	test "$(model llama.cpp sha256)" = "$(sha256sum <"$M/Qwen3-0.6B-BF16.gguf" | cut -d" " -f1)" &&
	test "$(model llama.cpp file)" = "$M/Qwen3-0.6B-BF16.gguf" &&
	test "$(model mistral.rs sha256)" = "$(model llama.cpp sha256)" &&
	test "$(model mistral.rs dir)" = "$M/Qwen3-0.6B" &&
	test "$(model mistral.rs dir_sha256)" = "$(dir_digest "$M/Qwen3-0.6B")" &&
	test "$(model mistral.rs dir_files)" = 3
'

test_expect_success 'a directory is hashed by its regular files, hidden metadata left out' '
	B="$TEST_DIR/bench" && D="$B/.warden/models/Qwen3-0.6B-bf16-mlx" &&
	test -f "$D/.cache/huggingface/download/model.metadata" &&
	want=$(dir_digest "$D") &&
	test "$(model omlx sha256)" = "$want" &&
	test "$(model omlx dir_sha256)" = "$want" &&
	test "$(model omlx dir)" = "$D" &&
	test "$(model omlx dir_files)" = 3 &&
	test "$(model omlx dir_bytes)" = "$(cat "$D/config.json" "$D/model.safetensors" "$D/sub/tokenizer.json" | wc -c)"
'

test_expect_success 'a cache snapshot is hashed through its links into the blobs' '
	B="$TEST_DIR/bench" &&
	S="$B/.warden/envs/mlx_lm/home/.cache/huggingface/hub/models--mlx-community--Qwen3-0.6B-bf16/snapshots/c0ffee1" &&
	test -L "$S/model.safetensors" &&
	test "$(model mlx_lm dir)" = "$S" &&
	test "$(model mlx_lm sha256)" = "$(dir_digest "$S")" &&
	test "$(model mlx_lm sha256)" = "$(model omlx sha256)"
'

test_expect_success 'ollama records the digest of the manifest its pull stored' '
	B="$TEST_DIR/bench" &&
	man="$B/.warden/envs/ollama/home/.ollama/models/manifests/fake-registry/library/qwen3/0.6b-fp16" &&
	test "$(model ollama sha256)" = "$(sha256sum <"$man" | cut -d" " -f1)" &&
	test "$(model ollama served)" = "qwen3:0.6b-fp16"
'

test_expect_success 'a directory whose digest the profile names, then one that differs' '
	cd bench &&
	D="$(pwd)/.warden/models/Qwen3-0.6B-bf16-mlx" &&
	good=$(dir_digest "$D") &&
	python3 - "$good" <<-PY &&
	import json, sys
	p = "adapters/profiles/qwen3-0.6b.json"; pr = json.load(open(p))
	pr["engines"]["omlx"]["sha256"] = sys.argv[1]
	json.dump(pr, open(p, "w"), indent=2)
	PY
	warden lint &&
	expect_exit 0 warden update omlx &&
	echo changed on disk >"$D/model.safetensors" &&
	FAKE_HF_REV=2 expect_exit 1 warden update omlx mlx_lm &&
	bad=$(dir_digest "$D") &&
	test "$good" != "$bad" &&
	expect_grep "^omlx: model_mismatch$" out &&
	expect_grep "model .qwen3-0.6b.: directory .$D. has sha256 $bad but its profile says $good" out &&
	expect_grep "^mlx_lm: unchanged" out &&
	test "$(model omlx sha256)" = "$good" &&
	case "$(model mlx_lm dir)" in */snapshots/c0ffee2) ;; *) false ;; esac
'

test_expect_success 'weights on disk with the profile s digest: fetch_model is not run' '
	cd bench &&
	F="$(pwd)/.warden/models/Qwen3-0.6B-BF16.gguf" &&
	python3 - "$(sha256sum <"$F" | cut -d" " -f1)" <<-PY &&
	import json, sys
	p = "adapters/profiles/qwen3-0.6b.json"; pr = json.load(open(p))
	pr["engines"]["llama.cpp"]["sha256"] = sys.argv[1]
	json.dump(pr, open(p, "w"), indent=2)
	PY
	mv ../bin/hf ../bin/hf.off &&
	: >../hf/calls &&
	expect_exit 0 warden update llama.cpp &&
	mv ../bin/hf.off ../bin/hf &&
	test ! -s ../hf/calls &&
	grep -r "fetch_model not run for model .qwen3-0.6b.: .$F. already has the profile.s sha256" .warden/logs/update >/dev/null &&
	test "$(model llama.cpp sha256)" = "$(sha256sum <"$F" | cut -d" " -f1)"
'

test_expect_success 'weights on disk that differ from the digest: fetch_model runs' '
	cd bench &&
	F="$(pwd)/.warden/models/Qwen3-0.6B-BF16.gguf" &&
	cp "$F" ../gguf.keep &&
	echo damaged >>"$F" &&
	: >../hf/calls &&
	expect_exit 0 warden update llama.cpp &&
	expect_grep "^download unsloth/Qwen3-0.6B-GGUF Qwen3-0.6B-BF16.gguf" ../hf/calls &&
	cmp "$F" ../gguf.keep
'

test_expect_success 'a link to a directory inside weights is refused, naming it' '
	cd bench &&
	D="$(pwd)/.warden/models/Qwen3-0.6B-bf16-mlx" &&
	ln -s sub "$D/loop" &&
	expect_exit 1 warden update omlx &&
	expect_grep "^omlx: failed$" out &&
	expect_grep "$D/loop. is a symbolic link to a directory" out &&
	rm "$D/loop"
'

test_expect_success 'a profile dir digest that is not 64 lowercase hex is a lint error at its line' '
	cd bench &&
	python3 - <<-PY &&
	import json
	p = "adapters/profiles/qwen3-0.6b.json"; pr = json.load(open(p))
	pr["engines"]["omlx"]["sha256"] = "ABC"
	json.dump(pr, open(p, "w"), indent=2)
	PY
	expect_exit 1 warden lint &&
	expect_grep "qwen3-0.6b.json:[0-9]*:[0-9]*: .engines.omlx.sha256. must be 64 lowercase hex digits" out
'

test_done
