#!/bin/sh
# t8035: a maintainer's first week. README's "Start your own benchmark"
# runs as written, from `warden init --sign` to a published, verified,
# signed snapshot, and the next cycle publishes again; a commit made on
# official outside warden is adopted by the next publish (the first, a
# policy edit that keeps a busy machine's noise from raising regression
# alerts, so that every cycle's exit here is its own), and a cycle
# that does not publish leaves it and the journal's export to that
# publish; a hand-made adapter commit that breaks the engine is triaged,
# and once adopted and its revert approved the cycle publishes again;
# without publish such a commit stops the cycle at its checkout, before any
# work, naming `warden journal adopt`, and status says the same; with
# `cycle.fidelity` false the gate does not fail engines for want of it.
. "$TOP_SRCDIR/tests/lib.sh"

PATH="$TOP_BUILDDIR:$PATH"
export PATH

# readme_by_hand REPO TEXT: a maintainer's commit of TEXT to README.md
# on official, made outside warden, HEAD detached at it again; its id
# (12 digits) in ./note.
readme_by_hand() {
	git -C "$1" checkout -q official &&
	echo "$2" >>"$1/README.md" &&
	git -C "$1" commit -q -am "README: $2" &&
	git -C "$1" checkout -q --detach official &&
	git -C "$1" rev-parse official | cut -c1-12 >note
}

# The commands of README's section, in order (its indented block).
readme_commands() {
	sed -n '/^## Start your own benchmark$/,/^## /p' "$TOP_SRCDIR/README.md" |
	    sed -n '/^    warden init/,/^$/p' | sed -n 's/^    //p'
}

test_expect_success 'README names the commands this test runs' '
	readme_commands >cmds &&
	cat >want <<-EOF &&
	warden init --sign bench
	cd bench
	warden lint
	warden fidelity --run-id reference
	warden fidelity mark-reference reference
	warden cycle
	warden verify snapshots/*.tar.gz
	EOF
	expect_equal want cmds
'

test_expect_success 'the commands as written: a published, verified, signed snapshot' '
	(set -e; . ./cmds) >story.out 2>story.err || {
		cat story.out story.err; exit 1; } &&
	expect_grep "^gate:      passed example-sim$" story.out &&
	expect_grep "^published: snapshot [0-9a-f]\{16\}, commit" story.out &&
	expect_grep "verifies: [0-9]* members, the [0-9]* outputs matching the manifest, signed by maintainer@example.org$" story.out &&
	test "$(git -C bench rev-parse --abbrev-ref HEAD)" = HEAD
'

test_expect_success 'init leaves HEAD detached at official, and the next cycle publishes again' '
	git -C bench worktree add -q ../pol official &&
	python3 - pol/policy/warden.json <<-\PY &&
	import json, sys
	p = json.load(open(sys.argv[1]))
	p["regressions"]["threshold_pct"] = 1000
	json.dump(p, open(sys.argv[1], "w"), indent=2)
	PY
	git -C pol commit -q -am "policy: a regression is a 10-fold slowdown (a busy machine is not one)" &&
	git -C bench worktree remove pol &&
	expect_exit 0 warden --repo bench cycle &&
	expect_grep "^published: snapshot [0-9a-f]\{16\}" out &&
	expect_grep "^checkout: moved the detached HEAD from [0-9a-f]* to [0-9a-f]*, the tip of .official.$" err &&
	test $(ls bench/snapshots/*.tar.gz | wc -l) -eq 2 &&
	for s in bench/snapshots/*.tar.gz; do
		expect_exit 0 warden --repo bench verify "$s" &&
		expect_grep "signed by maintainer@example.org$" out || exit 1
	done
'

test_expect_success 'a cycle on a branch checked out at the tip is not publishable' '
	warden init onbranch >/dev/null && cd onbranch &&
	git checkout -q -b work official &&
	expect_exit 0 warden fidelity --run-id ref &&
	warden fidelity mark-reference ref >/dev/null &&
	warden cycle >out 2>err || true &&
	expect_grep "HEAD is branch .work. at [0-9a-f]*, not a detached HEAD at the tip of .official." err &&
	expect_grep "^published: no" out
'

test_expect_success 'with cycle.publish a commit made on official by hand is adopted by the publish' '
	readme_by_hand bench "A note." && note=$(cat note) &&
	expect_exit 0 warden --repo bench status && unwrap out >out.u && mv out.u out &&
	expect_grep "^official: official commit $note is recorded by no journal entry yet: the next publish adopts it" out &&
	expect_no_grep "^blocked:" out &&
	expect_exit 0 warden --repo bench cycle &&
	expect_grep "^published: snapshot" out &&
	expect_exit 0 warden --repo bench journal verify
'

test_expect_success 'a cycle that does not publish leaves a hand-made commit, and the export, to the next publish' '
	readme_by_hand bench "Another note." && note=$(cat note) &&
	tip=$(git -C bench rev-parse official) &&
	touch bench/stray &&
	expect_exit 0 warden --repo bench cycle && unwrap out >out.u && mv out.u out &&
	expect_grep "^cycle [^ ]* (roster example), round 1: done, exit 0$" out &&
	expect_grep "^published: no: cannot publish: the working tree is not clean" out &&
	expect_grep "^journal:   not exported: official commit $note is recorded by no journal entry yet: the next publish adopts it .*; the journal is exported then warden journal show --cycle [^ ]*$" out &&
	expect_grep "^export: not exported: official commit $note " err &&
	test "$(git -C bench rev-parse official)" = "$tip" &&
	expect_exit 0 warden --repo bench status &&
	expect_grep "^cycle [^ ]* (roster example): done, round 1$" out &&
	expect_no_grep "^blocked:" out &&
	expect_exit 1 warden --repo bench journal verify &&
	rm bench/stray &&
	expect_exit 0 warden --repo bench cycle &&
	expect_grep "^published: snapshot" out &&
	expect_grep "^journal:   git show official:journals/" out &&
	expect_exit 0 warden --repo bench journal verify
'

test_expect_success 'the morning after: a hand-made adapter commit breaks the engine; adopted and the revert approved, the cycle publishes' '
	git -C bench checkout -q official &&
	sed -i "s/\"--accuracy\", \"0.9\"\]/\"--accuracy\", \"0.9\", \"--zero-rate\", \"1\"]/" \
	    bench/adapters/engines/example-sim.json &&
	git -C bench commit -q -am "example-sim: a new flag" &&
	git -C bench checkout -q --detach official &&
	flag=$(git -C bench rev-parse official | cut -c1-12) &&
	expect_exit 4 warden --repo bench cycle && unwrap out >out.u && mv out.u out &&
	expect_grep "^broke:     example-sim: 2 cells all-failed$" out &&
	review=$(sed -n "s/^review:    #\([0-9]*\) (triage)$/\1/p" out) &&
	test -n "$review" &&
	expect_grep "^journal:   not exported: official commit $flag is recorded by no journal entry yet" out &&
	expect_exit 4 warden --repo bench cycle && unwrap out >out.u && mv out.u out &&
	expect_grep "^journal:   not exported: official commit $flag " out &&
	expect_exit 0 warden --repo bench journal adopt "$flag" &&
	expect_exit 0 warden --repo bench review approve "$review" --as "T <t@example.org>" &&
	expect_exit 0 warden --repo bench cycle &&
	expect_grep "^published: snapshot" out &&
	expect_exit 0 warden --repo bench journal verify
'

test_expect_success 'a bench without publish and fidelity: its own commits, adopted by hand' '
	warden init quiet >/dev/null && cd quiet &&
	git checkout -q official &&
	python3 - <<-PY &&
	import json
	p = json.load(open("policy/warden.json"))
	p["cycle"]["fidelity"] = False
	p["cycle"]["publish"] = False
	json.dump(p, open("policy/warden.json", "w"), indent=2)
	PY
	git commit -q -am "policy: no fidelity, no publish" &&
	git checkout -q --detach official &&
	expect_exit 0 warden journal adopt official
'

test_expect_success 'cycle.fidelity false: the gate does not fail the engine for want of fidelity' '
	cd quiet &&
	expect_exit 0 warden cycle --id quiet-1 &&
	expect_grep "^cycle quiet-1 (roster example), round 1: done, exit 0$" out &&
	expect_grep "^gate:      passed example-sim$" out &&
	expect_exit 0 warden gate &&
	expect_grep "fidelity not gated (policy .cycle.fidelity. is false)" out &&
	expect_grep "^example-sim  *✓  *-  *✓  *pass" out &&
	warden --json gate >g.json &&
	python3 -c "import json; e = json.load(open(\"g.json\"))[\"engines\"][0]; assert e[\"fidelity\"][\"pass\"] and \"not_gated\" in e[\"fidelity\"], e"
'

test_expect_success 'a commit made on official outside warden: refused at checkout, naming journal adopt' '
	cd quiet &&
	warden campaign list >runs.before 2>/dev/null &&
	git checkout -q official &&
	echo "A fix." >>README.md &&
	git commit -q -am "README: a fix" &&
	git checkout -q --detach official &&
	fix=$(git rev-parse official | cut -c1-12) &&
	expect_exit 1 warden cycle &&
	expect_grep "^warden: official commit $fix is recorded by no journal entry: .official. was moved outside warden; .* .warden journal adopt $fix." err &&
	test $(grep -c "^warden: " err) -eq 1 &&
	expect_no_grep "^update\|^campaign" err &&
	warden campaign list >runs.after 2>/dev/null &&
	expect_equal runs.before runs.after &&
	expect_exit 0 warden status && unwrap out >out.u && mv out.u out &&
	expect_grep "^blocked:  official commit $fix .*warden journal adopt $fix" out &&
	expect_no_grep "warden cycle --resume" out &&
	warden --json status >st.json &&
	python3 -c "import json; assert \"journal adopt\" in json.load(open(\"st.json\"))[\"blocked\"]" &&
	expect_exit 0 warden journal adopt "$fix" &&
	expect_exit 0 warden cycle &&
	expect_exit 0 warden status &&
	expect_no_grep "^blocked:" out &&
	expect_exit 0 warden journal verify
'

test_done
