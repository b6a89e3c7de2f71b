#!/bin/sh
# t0070: what warden prints fits 80 columns at the benchmark's scale. Nine
# engines with the real engines' names (1 model x 2 splits x 3 levels: 54
# cells; 162 with three models), pip engines installed by the substitute
# shim, sharing two dependencies; a release of one breaks five of them and
# an adapter commit a sixth, and triage names both culprits (its scratch
# installs run the same shim, in the sandbox). The cycle summary groups the version changes by what moved and the broken
# cells by engine, and cuts what is past its bound with a count and the
# command that shows it whole; `gate`, `status`, `journal show`,
# `incident list|show` (failing cells grouped), `review list`, `campaign
# list|show`, `stale`, `fidelity show` and `triage` keep every line within
# 80 columns too.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/cycle/cycle-setup.sh"

SHIM="$TEST_DIR/shim"
mkdir -p "$SHIM"
ENGINES="llama.cpp ollama mlx-lm vllm-metal vllm-mlx omlx sglang hf-transformers mistral.rs"
# refused to start (crashed cells), and served zero tokens (all-failed);
# omlx's adapter changes to crash after two requests, failing each cell
REFUSE="mlx-lm vllm-metal vllm-mlx"
ZERO="sglang hf-transformers"

# index V: every engine package at V, needing `shared` and `common`; shared
# and common at 1.0, or (V = 2.0) also at 2.0 and 1.1.
index() {
	python3 - "$SHIM/index.json" "$1" "$ENGINES" <<-'PY'
	import json, sys
	out, v, engines = sys.argv[1], sys.argv[2], sys.argv[3].split()
	later = v != "1.0"
	ix = {"shared": {"versions": ["1.0"] + (["2.0"] if later else [])},
	      "common": {"versions": ["1.0"] + (["1.1"] if later else [])}}
	for e in engines:
	    ix[e.replace(".", "_").replace("-", "_")] = {
	        "versions": ["1.0"] + ([v] if later else []),
	        "deps": ["shared", "common"]}
	json.dump(ix, open(out, "w"))
	PY
}

# cols FILE...: fail naming every line wider than 80 columns.
cols() {
	python3 - "$@" <<-'PY'
	import sys
	bad = 0
	for f in sys.argv[1:]:
	    for i, l in enumerate(open(f, encoding="utf-8").read().split("\n"), 1):
	        if len(l) > 80:
	            print("%s:%d: %d columns: %s" % (f, i, len(l), l))
	            bad = 1
	sys.exit(bad)
	PY
}

test_expect_success 'nine pip engines, five of them broken by shared 2.0' '
	index 1.0 &&
	cycle_bench bench &&
	bench_policy bench "campaign.splits=[\"chat\", \"agent\"]" \
	    "campaign.concurrency=[1, 8, 16]" "cycle.limit=2" \
	    update.venv_pip=false \
	    "update.shims={\"pip\": [\"python3\", \"$TOP_SRCDIR/tests/fixtures/update/fake-pip-shim.py\", \"$SHIM\"]}" &&
	for e in $ENGINES; do
		pip_adapter bench "$e" "$(echo "$e" | tr .- __)" || exit 1
	done &&
	python3 - bench "$ENGINES" "$REFUSE" "$ZERO" <<-PY &&
	import json, sys
	d, engines = sys.argv[1], sys.argv[2].split()
	refuse, zero = sys.argv[3].split(), sys.argv[4].split()
	for e in engines:
	    p = "%s/adapters/engines/%s.json" % (d, e)
	    a = json.load(open(p))
	    a["serve"]["argv"] += ["--itl", "1", "--prefill-rate", "0",
	        "--labels", "{repo}/workloads/fidelity/items.jsonl",
	        "--accuracy", "0.9"]
	    if e in refuse + zero:
	        a["serve"]["argv"] += ["--version-from-pip",
	            "{env_dir}/venv:shared", "--broken-versions", "2.0",
	            "--broken-mode", "refuse" if e in refuse else "zero"]
	    a["serve"]["splits"] = {"agent": {"ctx": 16384}}
	    json.dump(a, open(p, "w"), indent=2)
	PY
	(cd bench && warden lint >/dev/null) &&
	cycle_commit bench "nine engines" &&
	warden --repo bench update >/dev/null 2>&1 &&
	warden --repo bench fidelity --engine llama.cpp --shots 0 --limit 12 \
	    --run-id ref >/dev/null 2>&1 &&
	warden --repo bench fidelity mark-reference ref >/dev/null
'

test_expect_success 'the first cycle: a summary within 80 columns' '
	WARDEN_CYCLE=c1 warden --repo bench cycle >c1.out 2>c1.err || true &&
	expect_grep "^cells:     18: 18 ok$" c1.out &&
	cols c1.out &&
	expect_grep "^gate:      passed hf-transformers, llama.cpp, mistral.rs, mlx-lm, ollama, omlx,$" c1.out &&
	expect_grep "^                  sglang, vllm-metal, vllm-mlx$" c1.out
'

test_expect_success 'the second cycle: changes grouped by what moved, cut with a pointer' '
	index 2.0 &&
	python3 - bench/adapters/engines/omlx.json <<-PY &&
	import json, sys
	a = json.load(open(sys.argv[1]))
	a["serve"]["argv"] += ["--abort-after", "2"]
	json.dump(a, open(sys.argv[1], "w"), indent=2)
	PY
	cycle_commit bench "omlx: a new flag" &&
	rc=0 && WARDEN_CYCLE=c2 warden --repo bench cycle >c2.out 2>c2.err || rc=$? &&
	test "$rc" = 4 &&
	cat c2.out &&
	cols c2.out &&
	expect_grep "^changed:   common 1.0 -> 1.1: llama.cpp, ollama, mlx-lm, vllm-metal, vllm-mlx,$" c2.out &&
	expect_grep "^                              omlx, sglang, hf-transformers, mistral.rs$" c2.out &&
	expect_grep "^           shared 1.0 -> 2.0: llama.cpp, " c2.out &&
	expect_grep "^           llama-cpp 1.0 -> 2.0: llama.cpp$" c2.out &&
	expect_grep "^           and 8 more changes: warden versions --diff c1 c2$" c2.out &&
	expect_grep "^broke:     mlx-lm: 2 cells crashed, vllm-metal: 2 cells crashed,$" c2.out &&
	expect_grep "^           vllm-mlx: 2 cells crashed, omlx: 2 cells crashed,$" c2.out &&
	expect_grep "^           sglang: 2 cells all-failed, hf-transformers: 2 cells all-failed$" c2.out &&
	expect_grep "^journal:   git show official:journals/c2.md$" c2.out &&
	grep -Fqx "approve:   warden review approve 3 \\" c2.out &&
	grep -Fqx "               --as \"Test Maintainer <maintainer@example.org>\"" c2.out &&
	warden --repo bench versions --diff c1 c2 >diff.out &&
	expect_grep "shared" diff.out
'

test_expect_success 'gate: the table and its failures within 80 columns, the rest counted' '
	expect_exit 1 warden --repo bench gate &&
	cp out gate.out &&
	expect_grep "^gate over results [0-9a-f]*: campaign c2-r1-campaign;$" gate.out &&
	cols gate.out &&
	expect_grep "^engine  *complete fidelity coverage result   tok/s   GiB  RAM hint growth$" gate.out &&
	expect_grep "^llama.cpp  *✓  *✓  *✓  *pass" gate.out &&
	expect_grep "^omlx  *✗  *✗  *✓  *FAIL" gate.out &&
	test "$(grep -c "^omlx completion ✗ qwen3-0.6b/" gate.out)" = 2 &&
	expect_grep "^omlx completion ✗ and 4 more: warden --json gate$" gate.out &&
	expect_grep "^failed: hf-transformers, mlx-lm, omlx, sglang, vllm-metal, vllm-mlx$" gate.out
'

test_expect_success 'status: the steps as an aligned table within 80 columns' '
	expect_exit 0 warden --repo bench status &&
	cols out &&
	expect_grep "^  round 1  regressions  done  " out &&
	expect_grep "^  round 1  gate         done  " out
'

test_expect_success 'journal show: each entry a line and its body wrapped, within 80 columns' '
	expect_exit 0 warden --repo bench journal show &&
	cols out &&
	test "$(grep -c "^ *[0-9][0-9]*  [0-9-]*T[0-9:.]*Z  " out)" = \
	    "$(sqlite3 bench/.warden/warden.db "select count(*) from journal")" &&
	expect_exit 0 warden --repo bench journal show --full -n 1 &&
	test "$(grep -c "^ *[0-9][0-9]*  [0-9-]*T[0-9:.]*Z  " out)" = 1 &&
	test "$(grep -c "^        {\"" out)" = 1 &&
	test "$(tail -n 1 out | cut -c1-10)" = "        {\""
'

test_expect_success 'incidents, reviews, campaigns and triage within 80 columns' '
	expect_exit 0 warden --repo bench incident list &&
	cp out incidents.out && cols incidents.out &&
	test "$(grep -c "^[12]    confirmed  *[a-z]*  *c2$" incidents.out)" = 2 &&
	expect_grep "^     shared 1.0 → 2.0 broke mlx-lm, vllm-metal, vllm-mlx, sglang and$" incidents.out &&
	expect_grep "^     hf-transformers$" incidents.out &&
	for i in 1 2; do
		warden --repo bench incident show $i >show$i.out &&
		cols show$i.out || exit 1
	done &&
	expect_grep "^engines:  mlx-lm vllm-metal vllm-mlx sglang hf-transformers$" show1.out &&
	expect_grep "^    not_ready 0/2 crashed: qwen3-0.6b chat c=1,8,16, qwen3-0.6b agent c=1,8,16$" show1.out &&
	expect_grep "^    complete 0/2 all-failed: qwen3-0.6b chat c=1,8,16, qwen3-0.6b agent c=1,8,16$" show1.out &&
	expect_grep "^    and 1 more line: warden --json incident show 1$" show1.out &&
	expect_no_grep "^    qwen3-0.6b" show1.out &&
	expect_grep "^culprit:  commit [0-9a-f]\{40\} \"omlx: a new flag\"$" show2.out &&
	expect_grep "^proposal: triage: incident 2: revert [0-9a-f]* (review 2), which broke omlx:$" show2.out &&
	expect_exit 0 warden --repo bench review list &&
	cp out reviews.out && cols reviews.out &&
	expect_grep "^1     approved  community  [0-9T:.Z-]*$" reviews.out &&
	expect_grep "^      Contributor <c@example.org> nine engines$" reviews.out &&
	expect_grep "^3     pending   triage     [0-9T:.Z-]*$" reviews.out &&
	expect_grep "^      in mlx-lm, vllm-metal, vllm-mlx, sglang and hf-transformers$" reviews.out &&
	expect_exit 0 warden --repo bench campaign list && cols out &&
	expect_exit 0 warden --repo bench stale && cols out &&
	expect_grep "^hf-transformers  pip   unknown no release dates for .hf_transformers.: policy$" out &&
	expect_grep "^                               .update.index.json_url. is not set$" out &&
	expect_exit 0 warden --repo bench fidelity show ref && cols out &&
	expect_grep "^llama.cpp$" out &&
	expect_grep "^  qwen3-0.6b  *0  *[0-9.]*  *[0-9.]*  *[0-9.]*  *+0.00 100.0%  *0  *0  complete$" out &&
	expect_exit 0 warden --repo bench campaign show c2-r1-campaign &&
	cols out &&
	expect_exit 1 warden --repo bench triage --cycle c2 &&
	cp out triage.out && cols triage.out &&
	expect_grep "^cycle c2: 6 engines broken, 3 healthy$" triage.out &&
	expect_grep "^hf-transformers: broken (healthy in c1); 3 packages changed$" triage.out &&
	expect_grep "^  suspects: common 1.0 → 1.1 (+3), shared 1.0 → 2.0 (+3),$" triage.out &&
	expect_grep "^            hf-transformers 1.0 → 2.0 (+1)$" triage.out &&
	expect_grep "^omlx: broken (healthy in c1); 3 packages changed, 1 commit on official changed$" triage.out &&
	test "$(grep -c "^  already explained by incident 1$" triage.out)" = 5 &&
	expect_grep "^incident 1 updated (confirmed): shared 1.0 → 2.0 broke mlx-lm, vllm-metal,$" triage.out &&
	expect_grep "^    vllm-mlx, sglang and hf-transformers$" triage.out
'

test_done
