#!/bin/sh
# t4003: brew sources through the brew shim, against a fake `brew` on
# PATH that records its calls; model weights fetched by the adapter's
# fetch_model and checked against the profile's sha256: a digest that
# differs stops that engine's update, naming the file and both digests.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"

FAKE_BREW_DIR="$TEST_DIR/brew"
export FAKE_BREW_DIR
mkdir -p "$TEST_DIR/bin" "$FAKE_BREW_DIR"
cp "$TOP_SRCDIR/tests/fixtures/update/fake-brew" "$TEST_DIR/bin/brew"
PATH="$TEST_DIR/bin:$PATH"
export PATH

brew_state() {
	python3 -c "
import json, sys
json.dump({\"installed\": {}, \"available\": json.loads(sys.argv[1]),
           \"deps\": {\"ollama\": [\"ggml\"]}}, open(\"$FAKE_BREW_DIR/state.json\", \"w\"))" "$1"
}

brew_available() {
	python3 -c "
import json, sys
p = \"$FAKE_BREW_DIR/state.json\"; st = json.load(open(p))
st[\"available\"].update(json.loads(sys.argv[1])); json.dump(st, open(p, \"w\"))" "$1"
}

test_expect_success 'a bench with a brew engine and a fake brew' '
	brew_state "{\"ollama\": \"0.5.0\", \"ggml\": \"1.0\", \"other\": \"9\"}" &&
	bench_init bench &&
	python3 - <<PY &&
import json
d = "bench"
a = {"schema": 1, "name": "ollamab", "api": "openai-chat",
     "source": {"kind": "brew", "package": "ollama"},
     "serve": {"argv": ["ollama", "serve"], "health": "/"}}
json.dump(a, open(d + "/adapters/engines/ollamab.json", "w"), indent=2)
pol = json.load(open(d + "/policy/warden.json"))
pol["rosters"]["test"].append("ollamab")
json.dump(pol, open(d + "/policy/warden.json", "w"), indent=2)
PY
	(cd bench && warden lint)
'

test_expect_success 'update installs the formula through the shim' '
	cd bench &&
	expect_exit 0 warden update ollamab &&
	expect_grep "^  ollama (none) → 0.5.0$" out &&
	expect_grep "^  ggml (none) → 1.0$" out &&
	expect_grep "^install ollama$" "$FAKE_BREW_DIR/calls" &&
	expect_no_grep "^upgrade" "$FAKE_BREW_DIR/calls"
'

test_expect_success 'the shim reports exactly what brew has installed' '
	brew install other >/dev/null &&
	"$WARDEN_SHIM_DIR/brew" versions --env /nonexistent ollama >shim.json &&
	python3 -c "
import json
d = json.load(open(\"shim.json\"))
assert d == {\"tool\": \"brew\", \"tool_version\": \"4.4.9\", \"python\": None,
             \"packages\": {\"ollama\": \"0.5.0\", \"ggml\": \"1.0\"}}, d" &&
	"$WARDEN_SHIM_DIR/brew" versions --env /nonexistent >all.json &&
	python3 -c "
import json
assert json.load(open(\"all.json\"))[\"packages\"] == {\"ollama\": \"0.5.0\", \"ggml\": \"1.0\", \"other\": \"9\"}" &&
	expect_grep "^info --json=v2 --installed$" "$FAKE_BREW_DIR/calls"
'

test_expect_success 'a new formula version: --dry-run asks brew outdated, upgrades nothing' '
	brew_available "{\"ollama\": \"0.6.0\", \"ggml\": \"1.1\"}" &&
	cd bench &&
	: >"$FAKE_BREW_DIR/calls" &&
	expect_exit 0 warden update --dry-run ollamab &&
	expect_grep "^ollamab: would_update$" out &&
	expect_grep "^  ollama 0.5.0 → 0.6.0$" out &&
	expect_grep "^outdated --json=v2 ollama$" "$FAKE_BREW_DIR/calls" &&
	expect_no_grep "^upgrade" "$FAKE_BREW_DIR/calls" &&
	test "$(brew list --versions ollama)" = "ollama 0.5.0"
'

test_expect_success 'update upgrades through brew upgrade' '
	cd bench &&
	expect_exit 0 warden update ollamab &&
	expect_grep "^  ollama 0.5.0 → 0.6.0$" out &&
	expect_grep "^  ggml 1.0 → 1.1$" out &&
	expect_grep "^upgrade ollama$" "$FAKE_BREW_DIR/calls" &&
	warden --json versions ollamab | grep -q "\"name\": \"brew\""
'

test_expect_success 'a pin brew cannot honour fails that engine only' '
	cd bench &&
	python3 -c "
import json; p = \"adapters/engines/ollamab.json\"; a = json.load(open(p))
a[\"source\"][\"pin\"] = \"0.5.0\"; json.dump(a, open(p, \"w\"))" &&
	expect_exit 1 warden update ollamab &&
	expect_grep "^ollamab: failed$" out &&
	expect_grep "brew cannot install ollama 0.5.0: 0.6.0 is installed" out &&
	warden --json versions ollamab | grep -q "\"engine_version\": \"0.6.0\""
'

# A `none` engine whose fetch_model copies weights from a "hub" directory.
test_expect_success 'a bench engine with model weights and fetch_model' '
	mkdir -p hub && printf "weights v1" >hub/model.bin &&
	python3 - "$TEST_DIR" <<PY &&
import json, sys, hashlib
t = sys.argv[1]
d = "bench"
a = {"schema": 1, "name": "wsim", "api": "openai-chat",
     "source": {"kind": "none", "version_argv": ["warden-simengine", "--help"]},
     "fetch_model": ["cp", t + "/hub/model.bin", "{model_path}"],
     "serve": {"argv": ["warden-simengine", "--port", "{port}"], "health": "/health"}}
json.dump(a, open(d + "/adapters/engines/wsim.json", "w"), indent=2)
p = json.load(open(d + "/adapters/profiles/qwen3-0.6b.json"))
p["engines"]["wsim"] = {"model": "Qwen/Qwen3-0.6B", "file": "wsim/model.bin",
    "sha256": hashlib.sha256(b"weights v1").hexdigest()}
json.dump(p, open(d + "/adapters/profiles/qwen3-0.6b.json", "w"), indent=2)
PY
	cd bench && warden lint
'

test_expect_success 'weights whose digest matches are recorded in the manifest' '
	cd bench &&
	expect_exit 0 warden update wsim &&
	test -f .warden/models/wsim/model.bin &&
	warden --json versions wsim >v.json &&
	python3 -c "
import json, hashlib
m = json.load(open(\"v.json\"))[\"wsim\"][\"models\"][\"qwen3-0.6b\"]
assert m[\"sha256\"] == hashlib.sha256(b\"weights v1\").hexdigest(), m
assert m[\"bytes\"] == 10 and m[\"file\"].endswith(\"/.warden/models/wsim/model.bin\"), m"
'

test_expect_success 'a digest that differs stops the update, naming file and digests' '
	printf "weights v2" >hub/model.bin &&
	cd bench &&
	printf "a damaged copy" >.warden/models/wsim/model.bin &&
	good=$(python3 -c "import hashlib; print(hashlib.sha256(b\"weights v1\").hexdigest())") &&
	bad=$(python3 -c "import hashlib; print(hashlib.sha256(b\"weights v2\").hexdigest())") &&
	expect_exit 1 warden update wsim ollamab &&
	expect_grep "^wsim: model_mismatch$" out &&
	expect_grep "model .qwen3-0.6b.: .*/.warden/models/wsim/model.bin. has sha256 $bad but its profile says $good" out &&
	expect_grep "^ollamab: failed$" out &&
	warden --json versions wsim | grep -q "\"sha256\": \"$good\"" &&
	test "$(sqlite3 .warden/warden.db "select outcome from update_attempts where engine = '"'"'wsim'"'"' order by id desc limit 1")" = model_mismatch
'

test_done
