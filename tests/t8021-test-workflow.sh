#!/bin/sh
# t8021: warden's own workflow, .github/workflows/test.yml, is a valid
# GitHub Actions workflow (checked by @action-validator/cli, as t8020
# checks ci/github/) that does what it is for: on every push and pull
# request, ci/test on a GitHub-hosted macOS arm64 runner and on Ubuntu,
# ci/demo on macOS, and the tests' logs kept as an artifact when ci/test
# fails. It cannot run here; this checks what it says.
. "$TOP_SRCDIR/tests/lib.sh"

W="$TOP_SRCDIR/.github/workflows/test.yml"
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

test_expect_success_if $have_av 'the workflow passes the validator, a broken copy does not' '
	"$AV" "$W" >out 2>&1 || { cat out; exit 1; }
	sed "s/^    runs-on:/    runs-at:/" "$W" >broken.yml &&
	! cmp -s broken.yml "$W" &&
	! "$AV" broken.yml >out 2>&1
'

# jobs: each job of the workflow as "JOB RUNS-ON RUN..." (the run: lines
# of its steps joined), read by the same YAML rules GitHub applies where
# PyYAML is at hand, else skipped.
have_yaml=no
python3 -c "import yaml" 2>/dev/null && have_yaml=yes
jobs() {
	python3 - "$W" <<'PY'
import sys, yaml
w = yaml.safe_load(open(sys.argv[1]))
on = w.get(True, w.get("on"))   # YAML 1.1 reads a bare on: as true
print("on", " ".join(sorted(on)))
for name, job in w["jobs"].items():
    runs_on = job["runs-on"]
    if "matrix" in str(runs_on):
        runs_on = ",".join(job["strategy"]["matrix"]["os"])
    runs = [" ".join(s["run"].split()) for s in job["steps"] if "run" in s]
    print(name, runs_on, "|".join(runs))
    for s in job["steps"]:
        if s.get("uses", "").startswith("actions/upload-artifact@"):
            print(name, "upload", s.get("if"), " ".join(s["with"]["path"].split()))
PY
}

test_expect_success_if $have_yaml 'on every push and pull request: ci/test on macOS arm64 and Ubuntu, ci/demo on macOS' '
	jobs >jobs &&
	cat jobs &&
	expect_grep "^on pull_request push$" jobs &&
	expect_grep "^test macos-1[45],ubuntu-latest .*|ci/test$" jobs &&
	expect_grep "^demo macos-1[45] ci/demo$" jobs
'

test_expect_success_if $have_yaml 'a failing ci/test keeps its tests'"'"' logs' '
	jobs >jobs &&
	expect_grep "^test upload failure() build/\*/tests/\*\*/\*.log " jobs
'

test_expect_success 'what the workflow runs is in the tree' '
	for s in $(sed -n "s/^ *run: \(ci\/[a-z-]*\).*/\1/p" "$W"); do
		test -x "$TOP_SRCDIR/$s" || { echo "no $s"; exit 1; }
	done &&
	test "$(grep -c "run: ci/" "$W")" = 2
'

test_done
