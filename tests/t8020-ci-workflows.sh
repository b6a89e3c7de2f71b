#!/bin/sh
# t8020: the GitHub Actions workflows of ci/github/ are valid workflows
# (checked by @action-validator/cli, which ci/deps installs from the npm
# registry into build/ci-tools), they do what they are for (a scheduled
# cycle uploading snapshot and journal, pr-check with annotations and
# JUnit, a fleet of shards merged and published), and every warden command
# they call exists, with every option they give it.
. "$TOP_SRCDIR/tests/lib.sh"

WORKFLOWS="$TOP_SRCDIR/ci/github"
AV=${ACTION_VALIDATOR:-}
if [ -z "$AV" ]; then
	for c in "$TOP_SRCDIR/build/ci-tools/node_modules/.bin/action-validator" \
	    "$(command -v action-validator 2>/dev/null)"; do
		if [ -n "$c" ] && [ -x "$c" ]; then
			AV=$c
			break
		fi
	done
fi
have_av=no
[ -n "$AV" ] && command -v node >/dev/null 2>&1 && have_av=yes
[ "$have_av" = yes ] || echo "# no action-validator (run ci/deps): validation skipped"

test_expect_success 'the three workflows are there' '
	for w in cycle pr-check fleet; do
		test -f "$WORKFLOWS/$w.yml" || return 1
	done
'

test_expect_success_if $have_av 'each workflow passes the validator' '
	for w in "$WORKFLOWS"/*.yml; do
		"$AV" "$w" >out 2>&1 || { cat out; echo "$w"; return 1; }
	done
'

test_expect_success_if $have_av 'the validator refuses a broken workflow' '
	sed "s/^    runs-on:/    runs-at:/" "$WORKFLOWS/cycle.yml" >broken.yml &&
	! cmp -s broken.yml "$WORKFLOWS/cycle.yml" &&
	! "$AV" broken.yml >out 2>&1 &&
	expect_grep "runs-at" out
'

# calls: every warden invocation of the workflows as
# "FILE:LINE COMMAND OPTION...": the built binary called by its path
# (.../warden), on lines that are not comments.
calls() {
	python3 - "$WORKFLOWS" <<'PY'
import os, re, sys
d = sys.argv[1]
call = re.compile(r'/warden\s+(?:--repo\s+\S+\s+)?([a-z][a-z-]*)(.*)')
for name in sorted(os.listdir(d)):
    if not name.endswith(".yml"):
        continue
    for n, line in enumerate(open(os.path.join(d, name)), 1):
        text = line.strip()
        if text.startswith("#"):
            continue
        m = call.search(text)
        if m:
            opts = re.findall(r'(?<![\w-])(--[a-z][a-z-]*)', m.group(2))
            print("%s:%d %s %s" % (name, n, m.group(1), " ".join(opts)))
PY
}

test_expect_success 'the workflows call what they are for' '
	calls >calls &&
	cat calls &&
	expect_grep "^cycle.yml:[0-9]* cycle --resume --roster$" calls &&
	expect_grep "^cycle.yml:[0-9]* cycle --roster$" calls &&
	expect_grep "^pr-check.yml:[0-9]* pr-check --format$" calls &&
	expect_grep "^pr-check.yml:[0-9]* pr-check --smoke --format$" calls &&
	test $(grep -c "^pr-check.yml:" calls) -eq 3 &&
	grep -q "runs-on: \[self-hosted, macOS\]" "$WORKFLOWS/pr-check.yml" &&
	grep -q -e "--format github" "$WORKFLOWS/pr-check.yml" &&
	grep -q -e "--format junit" "$WORKFLOWS/pr-check.yml" &&
	expect_grep "^fleet.yml:[0-9]* campaign --shard --run-id$" calls &&
	expect_grep "^fleet.yml:[0-9]* merge --output$" calls &&
	expect_grep "^fleet.yml:[0-9]* verify *$" calls &&
	expect_grep "^fleet.yml:[0-9]* gate --snapshot$" calls &&
	expect_grep "^fleet.yml:[0-9]* publish --snapshot$" calls &&
	test "$(sed -n "s/^fleet.yml:\([0-9]*\) gate .*/\1/p" calls)" -lt \
	    "$(sed -n "s/^fleet.yml:\([0-9]*\) publish .*/\1/p" calls)" &&
	grep -q "cron:" "$WORKFLOWS/cycle.yml" &&
	grep -q "workflow_dispatch:" "$WORKFLOWS/cycle.yml" &&
	grep -q "self-hosted" "$WORKFLOWS/cycle.yml" &&
	grep -q "path: snapshots/" "$WORKFLOWS/cycle.yml" &&
	grep -q "path: .*/official/journals/" "$WORKFLOWS/cycle.yml" &&
	grep -q "strategy.job-total" "$WORKFLOWS/fleet.yml" &&
	grep -q "needs: shard" "$WORKFLOWS/fleet.yml"
'

# The official branch is moved by warden only while it is not checked
# out, and publish wants HEAD at its tip: every workflow that measures or
# publishes checks official out and detaches HEAD before calling warden,
# and pushes what warden committed there.
test_expect_success 'measuring workflows run on a detached HEAD at official and push it' '
	for w in cycle fleet; do
		grep -q "ref: official" "$WORKFLOWS/$w.yml" &&
		grep -q "git switch --detach$" "$WORKFLOWS/$w.yml" &&
		grep -q "git push origin refs/heads/official:refs/heads/official" "$WORKFLOWS/$w.yml" ||
		    { echo "$w.yml"; exit 1; }
	done &&
	test "$(grep -c "ref: official" "$WORKFLOWS/fleet.yml")" = 2 &&
	grep -q "\$RUNNER_TEMP/merged.tar.gz" "$WORKFLOWS/fleet.yml"
'

test_expect_success 'every warden command a workflow calls exists, with its options' '
	calls >calls &&
	"$WARDEN" help >help &&
	while read -r where cmd opts; do
		grep -q "^  $cmd " help || { echo "$where: no command '\''$cmd'\'' in warden help"; return 1; }
		"$WARDEN" "$cmd" --help >cmdhelp 2>&1 || { echo "$where: warden $cmd --help failed"; return 1; }
		for o in $opts; do
			grep -q -e "$o" cmdhelp || { echo "$where: warden $cmd has no $o"; return 1; }
		done
	done <calls
'

test_done
