#!/bin/sh
# t7003: `warden snapshot` writes the results tree (per-run JSON named by
# run id, comparison.json, gate.json, REPORT.md, SVG plots, manifest.json)
# into a reproducible archive; `warden verify` names a changed byte in any
# member, a removed member, an added member and a bad signature; the plots
# are well-formed SVG that renders to PNG.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/results/lib-results.sh"

TAMPER="python3 $TOP_SRCDIR/tests/fixtures/results/tamper.py"

test_expect_success 'a bench measured by two engines, with a fidelity run and a reference' '
	results_bench bench &&
	fid_adapter bench simfast --accuracy 1 --schedule continuous --itl 1 &&
	fid_adapter bench simslow --accuracy 0.9 --schedule serial --itl 1 &&
	commit_all bench engines &&
	expect_exit 0 warden --repo bench campaign --limit 8 --run-id c1 &&
	expect_exit 0 warden --repo bench fidelity --limit 40 --shots 0 --run-id f1 &&
	expect_exit 0 warden --repo bench fidelity mark-reference --engine simfast f1
'

test_expect_success 'snapshot writes snapshots/ID.tar.gz and the tree' '
	expect_exit 0 warden --repo bench snapshot --tree tree &&
	cp out snap.out &&
	id=$(sed -n "s/^snapshot \([0-9a-f]\{16\}\)$/\1/p" out) && test -n "$id" &&
	test -f "bench/snapshots/$id.tar.gz" &&
	expect_grep "^  sha256   $(sha256sum bench/snapshots/$id.tar.gz | cut -c1-64)$" out &&
	test -f tree/results/qwen3-0.6b/chat/simfast_c1.json &&
	test -f tree/results/qwen3-0.6b/chat/simslow_c1.json &&
	test -f tree/results/fidelity/qwen3-0.6b/simslow_f1.json &&
	test -f tree/results/fidelity/reference/qwen3-0.6b/simfast_f1.json &&
	jcheck tree/results/fidelity/qwen3-0.6b/simslow_f1.json \
	    "all(len(p) == 6 for c in o[\"cells\"] for p in c[\"predictions\"])" \
	    "all(isinstance(p[5], str) and p[5] for c in o[\"cells\"] for p in c[\"predictions\"] if p[4] == \"ok\")" &&
	for f in REPORT.md comparison.json gate.json fidelity.json manifest.json \
	    plots/throughput-qwen3-0.6b-chat.svg plots/ttft-qwen3-0.6b-chat.svg \
	    plots/memory-qwen3-0.6b-chat-c1.svg \
	    plots/memory-qwen3-0.6b-chat-c16.svg \
	    plots/throughput-memory-qwen3-0.6b-chat.svg; do
		test -s "tree/results/$f" || { echo "missing $f"; exit 1; }
	done
'

test_expect_success 'the manifest has the sha256 of every input and output' '
	jcheck tree/results/manifest.json \
	    "o[\"inputs\"][\"files\"][\"policy/warden.json\"] == \"$(sha256sum bench/policy/warden.json | cut -c1-64)\"" \
	    "o[\"inputs\"][\"files\"][\"adapters/engines/simfast.json\"] == \"$(sha256sum bench/adapters/engines/simfast.json | cut -c1-64)\"" \
	    "o[\"inputs\"][\"files\"][\"adapters/profiles/qwen3-0.6b.json\"] == \"$(sha256sum bench/adapters/profiles/qwen3-0.6b.json | cut -c1-64)\"" \
	    "o[\"inputs\"][\"files\"][\"workloads/chat.jsonl\"] == \"$(sha256sum bench/workloads/chat.jsonl | cut -c1-64)\"" \
	    "o[\"inputs\"][\"files\"][\"workloads/fidelity/items.jsonl\"] == \"$(sha256sum bench/workloads/fidelity/items.jsonl | cut -c1-64)\"" \
	    "o[\"inputs\"][\"warden_version\"] and \"simfast\" in o[\"inputs\"][\"engine_manifests\"]" \
	    "\"qwen3-0.6b\" in o[\"inputs\"][\"model_digests\"]" \
	    "o[\"commit\"] == \"$(git -C bench rev-parse HEAD)\"" \
	    "o[\"source_date_epoch\"] == $(git -C bench log -1 --format=%ct)" \
	    "o[\"outputs\"][\"results/REPORT.md\"] == \"$(sha256sum tree/results/REPORT.md | cut -c1-64)\"" \
	    "len(o[\"outputs\"]) == 14 and \"results/manifest.json\" not in o[\"outputs\"]"
'

test_expect_success 'REPORT.md holds the gate, per-concurrency, fidelity and memory tables, and what ran' '
	r=tree/results/REPORT.md &&
	expect_grep "^## Audit gates (SiliconBench Table 5)$" $r &&
	expect_grep "^| simfast | ✓ | ✓ | ✓ | pass |$" $r &&
	expect_grep "^## qwen3-0.6b / chat$" $r &&
	expect_grep "^Measured from 20[0-9-]*T[0-9:.]*Z to 20[0-9-]*T[0-9:.]*Z (UTC)\. Measured at commit .$(git -C bench rev-parse HEAD). " $r &&
	expect_grep "^| engine | c | requests | output tok/s | input tok/s | total tok/s | TTFT p50 (ms) | TTFT p99 (ms) | TPOT p50 (ms) | TPOT p90 (ms) | TPOT p99 (ms) | ITL p50 (ms) | ITL p90 (ms) | ITL p99 (ms) | peak system MiB | load | status | outcome |$" $r &&
	expect_grep "^| simfast | 16 | 8/8 | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9]* | [0-9.]* → [0-9.]*\( !\)\? | ok | complete |$" $r &&
	expect_grep "^## Since the last snapshot$" $r &&
	expect_grep "^Nothing to compare with: the official branch has no results yet\.$" $r &&
	expect_grep "^## Fidelity$" $r &&
	expect_grep "^| engine | model | shots | items | weighted F1 % | macro F1 % | vs reference (pp) | on items | agreement % | unparsable | failed | outcome |$" $r &&
	expect_grep "^| simslow | qwen3-0.6b | 0 | 40 | [0-9.]* | [0-9.]* | [-+][0-9.]* | 40 | " $r &&
	expect_grep "^## Memory$" $r &&
	expect_grep "^## What ran$" $r &&
	cpus=$(getconf _NPROCESSORS_ONLN) &&
	expect_grep "^| [0-9a-f]* | .* ($(uname -m)) | $cpus | [0-9.]* | - | $(uname -s) $(uname -r) |$" $r &&
	expect_grep "^| simfast | no version manifest (no .warden update. before it ran) | - | - | - | - | 8 |$" $r &&
	expect_grep "^!\[Output throughput, qwen3-0.6b / chat\](plots/throughput-qwen3-0.6b-chat.svg)$" $r
'

test_expect_success 'comparison.json carries the dates, the tails, input and total throughput and the load of each sweep' '
	jcheck tree/results/comparison.json \
	    "o[\"measured\"][\"from\"] < o[\"measured\"][\"to\"]" \
	    "o[\"since\"][\"why\"] == \"the official branch has no results yet\"" \
	    "all(r[k] is not None for t in o[\"tables\"] for r in t[\"rows\"] for k in (\"input_throughput\", \"total_token_throughput\", \"p90_tpot_ms\", \"p99_tpot_ms\", \"median_itl_ms\", \"p90_itl_ms\", \"p99_itl_ms\", \"started\", \"finished\"))" \
	    "all(abs(r[\"input_throughput\"] + r[\"output_throughput\"] - r[\"total_token_throughput\"]) < 1e-6 * r[\"total_token_throughput\"] for t in o[\"tables\"] for r in t[\"rows\"])" \
	    "all(r[\"machine_load\"][\"cpus\"] >= 1 and r[\"machine_load\"][\"start\"][\"load1\"] >= 0 and isinstance(r[\"machine_load\"][\"quiet\"], bool) for t in o[\"tables\"] for r in t[\"rows\"])"
'

test_expect_success 'every published file names each memory figure as the glossary does' '
	python3 - tree/results <<-\PY
	import glob, json, os, sys
	root = sys.argv[1]
	files = glob.glob(os.path.join(root, "qwen3-0.6b", "chat", "*.json"))
	files += [os.path.join(root, f) for f in ("comparison.json", "gate.json")]
	def keys(v):
	    if isinstance(v, dict):
	        for k, x in v.items():
	            yield k
	            yield from keys(x)
	    elif isinstance(v, list):
	        for x in v:
	            yield from keys(x)
	seen = set()
	for f in files:
	    ks = set(keys(json.load(open(f))))
	    old = ks & {"peak_engine_bytes", "peak_system_bytes",
	                "system_total_bytes", "gpu_hint_bytes", "memory_bytes"}
	    assert not old, (f, old)
	    seen |= ks
	for k in ("peak_engine_memory_bytes", "peak_system_memory_bytes",
	          "system_memory_bytes", "gpu_working_set_hint_bytes"):
	    assert k in seen, k
	PY
'

test_expect_success 'the archive is reproducible: fixed owner, mode and time, the same bytes twice' '
	expect_exit 0 warden --repo bench snapshot --output a.tar.gz &&
	sleep 1 &&
	expect_exit 0 warden --repo bench snapshot --output b.tar.gz &&
	cmp a.tar.gz b.tar.gz &&
	cmp a.tar.gz bench/snapshots/$(sed -n "s/^snapshot \([0-9a-f]\{16\}\)$/\1/p" snap.out).tar.gz &&
	tar tzvf a.tar.gz >listing &&
	cat listing &&
	test $(grep -c "^-rw-r--r-- 0/0 " listing) = $(wc -l <listing) &&
	test $(grep -c " $(git -C bench log -1 --format=%cd --date=format-local:"%Y-%m-%d %H:%M") results/" listing) = $(wc -l <listing) &&
	tar tzf a.tar.gz >names && sort names >sorted && cmp names sorted &&
	SOURCE_DATE_EPOCH=1700000000 warden --repo bench snapshot --output c.tar.gz >/dev/null &&
	tar tzvf c.tar.gz | grep -q " 2023-11-14 22:13 results/REPORT.md$" &&
	! cmp -s a.tar.gz c.tar.gz &&
	mkdir x && tar xzf a.tar.gz -C x && ! grep -r -l "$(uname -n)" x | grep .
'

test_expect_success 'a snapshot verifies' '
	expect_exit 0 warden verify a.tar.gz &&
	expect_grep "^a.tar.gz: snapshot [0-9a-f]\{16\} verifies: 15 members, the 14 outputs matching the manifest, unsigned$" out &&
	warden --json verify a.tar.gz >v.json &&
	jcheck v.json "o[\"ok\"] is True and o[\"problems\"] == [] and o[\"members\"] == 14" \
	    "o[\"archive_members\"] == $(tar tzf a.tar.gz | wc -l)"
'

test_expect_success 'a changed byte in any member makes verify fail, naming the member' '
	$TAMPER a.tar.gz - list >members &&
	test $(wc -l <members) = 15 &&
	while read m; do
		$TAMPER a.tar.gz t.tar.gz change "$m" &&
		expect_exit 1 warden verify t.tar.gz || exit 1
		grep -q "^t.tar.gz: changed member $m: " out || { echo "not named: $m"; cat out; exit 1; }
	done <members
'

test_expect_success 'a removed member, an added member each make verify fail, naming it' '
	$TAMPER a.tar.gz t.tar.gz remove results/gate.json &&
	expect_exit 1 warden verify t.tar.gz &&
	expect_grep "^t.tar.gz: removed member results/gate.json: the manifest lists it, the archive lacks it$" out &&
	$TAMPER a.tar.gz t.tar.gz add results/plots/extra.svg &&
	expect_exit 1 warden verify t.tar.gz &&
	expect_grep "^t.tar.gz: added member results/plots/extra.svg: not in the manifest$" out &&
	$TAMPER a.tar.gz t.tar.gz remove results/manifest.json &&
	expect_exit 1 warden verify t.tar.gz &&
	expect_grep "removed member results/manifest.json" out &&
	$TAMPER a.tar.gz t.tar.gz add ../escape &&
	expect_exit 1 warden verify t.tar.gz &&
	expect_grep "member .../escape. is not a file warden writes" err &&
	printf "not an archive" >junk.tar.gz &&
	expect_exit 2 warden verify junk.tar.gz &&
	expect_exit 2 warden verify
'

test_expect_success 'the plots are well-formed SVG and render to PNG' '
	for f in tree/results/plots/*.svg; do
		xmllint --noout "$f" || exit 1
		rsvg-convert -o "${f%.svg}.png" "$f" || exit 1
		test "$(head -c 8 "${f%.svg}.png" | od -An -tx1 | tr -d " ")" = 89504e470d0a1a0a || exit 1
		test $(wc -c <"${f%.svg}.png") -gt 5000 || exit 1
	done &&
	grep -q "viewBox=\"0 0 760 440\"" tree/results/plots/throughput-qwen3-0.6b-chat.svg
'

test_expect_success_if "$(command -v ssh-keygen >/dev/null && echo yes)" \
    'a signed snapshot verifies against the allowed_signers official names, a bad signature does not' '
	ssh-keygen -q -t ed25519 -N "" -C maint -f key &&
	ssh-keygen -q -t ed25519 -N "" -C other -f otherkey &&
	echo "maintainer@example.org $(cat key.pub)" >bench/policy/allowed_signers &&
	bench_policy bench "publish={\"allowed_signers\": \"policy/allowed_signers\", \"require_signature\": true}" &&
	commit_all bench signers &&
	expect_exit 2 warden --repo bench snapshot --output u.tar.gz &&
	expect_grep "policy requires signed snapshots" err &&
	expect_exit 0 warden --repo bench snapshot --sign-key key --output s.tar.gz &&
	expect_grep "members  16, signed" out &&
	WARDEN_SIGNING_KEY=key warden --repo bench snapshot --output s2.tar.gz >/dev/null &&
	cmp s.tar.gz s2.tar.gz &&
	expect_exit 1 warden --repo bench verify s.tar.gz &&
	expect_grep "member results/manifest.json.sig cannot be checked: no allowed_signers" out &&
	git -C bench branch -f official HEAD &&
	expect_exit 0 warden --repo bench verify s.tar.gz &&
	expect_grep "verifies: 16 members, the 14 outputs matching the manifest, signed by maintainer@example.org$" out &&
	expect_exit 1 warden --repo bench verify a.tar.gz &&
	expect_grep "removed member results/manifest.json.sig: policy requires a signed manifest" out &&
	expect_exit 0 warden --repo bench snapshot --sign-key otherkey --output o.tar.gz &&
	expect_exit 1 warden --repo bench verify o.tar.gz &&
	expect_grep "^o.tar.gz: bad signature results/manifest.json.sig: " out &&
	expect_exit 1 warden verify s.tar.gz &&
	expect_grep "member results/manifest.json.sig cannot be checked: no allowed_signers" out &&
	expect_exit 0 warden verify --allowed-signers bench/policy/allowed_signers s.tar.gz
'

test_done
