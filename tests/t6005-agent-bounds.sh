#!/bin/sh
# t6005: what an agent leaves in its worktree is read with bounds before
# warden spends memory on it. A file over the cap (a 6 GB sparse file), a
# directory replaced by a symlink, a FIFO, a hard link to a file outside
# the worktree and more entries than the walk's cap each reject the run
# with the gate's code and the path, never an error; warden stays small
# and does not hang. A large file the base tree ignores is not read. The
# guard looks at a bounded number of files created beside the worktree.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/agents/agent-setup.sh"

state_of() {
	sqlite3 bench/.warden/warden.db "select state from agent_runs where id = $1"
}

# peak FILE CMD...: run CMD; the peak resident set of it and its
# children, in KiB, goes to FILE; its exit status is CMD's.
peak() {
	python3 -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$@"
}

# bounded CMD...: CMD, killed after 300 s where timeout(1) exists: a
# hang fails the test instead of the suite (no timing is asserted).
bounded() {
	if command -v timeout >/dev/null 2>&1; then
		timeout 300 "$@"
	else
		"$@"
	fi
}

# untouched: nothing queued, official where it was.
untouched() {
	git -C bench rev-parse official >official.now &&
	expect_equal official.base official.now &&
	test "$(sqlite3 bench/.warden/warden.db "select count(*) from reviews")" = 0
}

test_expect_success 'a bench with a broken engine' '
	agent_bench bench
'

test_expect_success 'a 6 GB sparse file is refused by its size, unread: warden stays small' '
	agent_use bench bad-tree sparse &&
	git -C bench rev-parse official >official.base &&
	expect_exit 1 peak rss.kb "$WARDEN" --repo "$TEST_DIR/bench" agent run --engine simfix &&
	expect_grep "^agent run 1: rejected$" out &&
	expect_grep "^gate:     refused$" out &&
	expect_grep "too-large adapters/engines/simfix/weights.bin: is 6442450944 bytes, policy allows 1048576 per file" out &&
	test "$(state_of 1)" = rejected &&
	test "$(cat rss.kb)" -lt 204800 &&
	untouched
'

test_expect_success 'a directory replaced by a symlink is refused as a symlink' '
	agent_use bench bad-tree profiles-symlink &&
	git -C bench rev-parse official >official.base &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_grep "^agent run 2: rejected$" out &&
	expect_grep "symlink adapters/profiles: is a symbolic link" out &&
	expect_no_grep "error:" out &&
	test "$(state_of 2)" = rejected &&
	untouched
'

test_expect_success 'a FIFO is refused as a special file, and warden does not wait on it' '
	agent_use bench bad-tree fifo &&
	git -C bench rev-parse official >official.base &&
	expect_exit 1 bounded "$WARDEN" --repo "$TEST_DIR/bench" agent run --engine simfix &&
	expect_grep "^agent run 3: rejected$" out &&
	expect_grep "special-file adapters/engines/simfix/pipe: is a FIFO" out &&
	test "$(state_of 3)" = rejected &&
	untouched
'

test_expect_success 'a hard link to a file outside the worktree is refused, unread' '
	echo "{\"secret\": \"outside the worktree\"}" >secret.json &&
	agent_use bench bad-tree hardlink "$TEST_DIR/secret.json" &&
	agent_policy bench "agent.sandbox=\"off\"" &&
	git -C bench rev-parse official >official.base &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_grep "^agent run 4: rejected$" out &&
	expect_grep "hard-link adapters/engines/simfix/linked.json: has 2 links" out &&
	bw --json agent show 4 &&
	expect_no_grep "outside the worktree\\\\\"" out &&
	test "$(state_of 4)" = rejected &&
	untouched
'

test_expect_success 'more entries than the cap stop the walk: too-many-files' '
	agent_use bench bad-tree many &&
	git -C bench rev-parse official >official.base &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_grep "^agent run 5: rejected$" out &&
	expect_grep "too-many-files : the worktree holds more than [0-9]* files and directories (the base tree.s [0-9]*, and 10 for each changed file policy allows)" out &&
	test "$(state_of 5)" = rejected &&
	untouched
'

test_expect_success 'a large file the base tree ignores is never read; the fix is queued' '
	agent_use bench bad-tree ignored &&
	expect_exit 0 peak rss.kb "$WARDEN" --repo "$TEST_DIR/bench" agent run --engine simfix &&
	expect_grep "^agent run 6: queued$" out &&
	expect_grep "M adapters/engines/simfix.json +1 -1" out &&
	expect_no_grep "scratch.bin" out &&
	test "$(cat rss.kb)" -lt 204800 &&
	test "$(state_of 6)" = queued
'

test_expect_success 'without a sandbox, a flood of files beside the worktree quarantines the run' '
	agent_use bench bad-tree flood &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_grep "^agent run 7: quarantined$" out &&
	expect_grep "^sandbox:  off (policy: off)$" out &&
	expect_grep "quarantined: more than 10000 files were created under the repository" out &&
	test "$(state_of 7)" = quarantined &&
	rm -rf bench/.warden/flood
'

test_expect_success 'every refusal is journaled with its violations; the chain holds' '
	bw journal verify &&
	expect_exit 0 bw --json journal show --kind agent.finished &&
	python3 - out <<-PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	states = [e["body"]["state"] for e in d]
	assert states == ["rejected"] * 5 + ["queued", "quarantined"], states
	codes = [[v["code"] for v in e["body"]["gate"]["violations"]] for e in d[:5]]
	for want, got in zip(["too-large", "symlink", "special-file", "hard-link",
	                      "too-many-files"], codes):
	    assert want in got, (want, got)
	for e in d:
	    assert "error" not in e["body"], e["body"]
	assert d[-1]["body"]["reasons"], d[-1]
	PY
'


test_expect_success 'a transcript the agent left as a symlink is not read' '
	agent_use bench transcript-links &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_grep "^agent run [0-9]*: no-change$" out &&
	id=$(sed -n "s/^agent run \([0-9]*\):.*/\1/p" out) &&
	expect_exit 0 bw --json agent show $id &&
	python3 -c "import json, sys; r = json.load(open(sys.argv[1]))[\"record\"]; assert \"transcript\" not in r, r" out &&
	expect_no_grep "hostname-from-link" out
'

test_expect_success 'a transcript that is a regular file is rendered, quoted' '
	agent_use bench transcript-links plain &&
	expect_exit 1 bw agent run --engine simfix &&
	expect_grep "^transcript: claude-code, p/s\.jsonl (2 turns, 12 input and 5 output tokens)$" out &&
	expect_grep "^  read    task\.md$" out &&
	expect_grep "^  ran     false (exit 1)$" out &&
	expect_grep "^  said    done \\\\x1b\[31mred$" out &&
	expect_no_grep "hostname-from-link" out
'

test_done
