#!/bin/sh
# warden patch submit and warden review: a clean change is queued as a
# commit under refs/warden/review/N without touching the official branch
# or the working tree; approval re-runs the gate and lands the change on
# the official branch with its trailers; rejection only records; the
# journal shows who did what.
. "$TOP_SRCDIR/tests/lib.sh"
# Until runner/cmd.c lists the command, the whole script is skipped.
if ! "$WARDEN" help review >/dev/null 2>&1; then
	echo "1..0 # SKIP warden has no 'review' command in its table"
	rm -rf "$TEST_DIR"
	exit 0
fi

official() {
	git -C bench rev-parse official
}

# add_patch NAME FILE CONTENT: a patch adding FILE, made by git.
add_patch() {
	mkdir -p "bench/$(dirname "$2")" &&
	printf "%s\n" "$3" >"bench/$2" &&
	git -C bench add -A && git -C bench diff --cached >"$1" &&
	git -C bench reset -q --hard &&
	test -s "$1"
}

test_expect_success 'setup: a benchmark repository and some patches' '
	make_bench_repo bench &&
	add_patch new-adapter.patch adapters/engines/vllm-metal.json \
	    "{\"name\": \"vllm-metal\"}" &&
	add_patch conflict.patch adapters/engines/vllm-metal.json \
	    "{\"name\": \"vllm-metal\", \"port\": 9000}" &&
	add_patch third.patch adapters/engines/omlx.json "{\"name\": \"omlx\"}" &&
	add_patch fourth.patch adapters/profiles/gemma.json "{\"model\": \"g\"}" &&
	add_patch outside.patch workloads/chat.jsonl "{\"prompt\": \"x\"}" &&
	official >tip0 &&
	git -C bench status --porcelain >status0
'

test_expect_success 'submit queues a clean patch as review 1 under refs/warden' '
	expect_exit 0 warden --repo bench patch submit new-adapter.patch \
	    --source agent --author "Agent <agent@example.org>" \
	    --note "engines: add vllm-metal" &&
	expect_grep "queued as review 1 (refs/warden/review/1)" out &&
	git -C bench rev-parse -q --verify refs/warden/review/1 &&
	git -C bench log -1 --format=%B refs/warden/review/1 >msg &&
	expect_grep "^engines: add vllm-metal" msg &&
	expect_grep "^Warden-Source: agent" msg &&
	expect_grep "^Warden-Review: 1" msg &&
	test "$(git -C bench log -1 --format="%an <%ae>" refs/warden/review/1)" = \
	    "Agent <agent@example.org>" &&
	test "$(git -C bench rev-parse refs/warden/review/1^)" = "$(cat tip0)" &&
	expect_exit 0 warden --repo bench patch submit conflict.patch \
	    --source community --note "vllm-metal on port 9000" &&
	expect_grep "queued as review 2" out
'

test_expect_success 'submit left the official branch and the working tree alone' '
	test "$(official)" = "$(cat tip0)" &&
	git -C bench status --porcelain >status1 &&
	expect_equal status0 status1 &&
	test ! -e bench/adapters/engines/vllm-metal.json
'

test_expect_success 'a refused patch is not queued and is journaled' '
	expect_exit 1 warden --repo bench patch submit outside.patch \
	    --source community &&
	expect_grep "^outside-allowlist workloads/chat.jsonl" out &&
	expect_grep "patch refused, not queued" err &&
	test -z "$(git -C bench for-each-ref refs/warden/review/3)" &&
	warden --repo bench journal show --kind review.refused --full >j &&
	expect_grep "outside-allowlist" j
'

test_expect_success 'submit needs a valid --source' '
	expect_exit 2 warden --repo bench patch submit new-adapter.patch \
	    --source friend &&
	expect_grep "source must be agent, community or triage" err
'

test_expect_success 'review list and show describe the queued change' '
	warden --repo bench review list >list &&
	expect_grep "^1 *pending *agent" list &&
	warden --repo bench review show 1 >show &&
	expect_grep "^review 1: pending" show &&
	expect_grep "gate: clean" show &&
	expect_grep "A adapters/engines/vllm-metal.json +1 -0" show &&
	expect_grep "^    +{\"name\": \"vllm-metal\"}" show &&
	warden --repo bench --json review list --status approved >none &&
	test "$(tr -d " \n" <none)" = "[]"
'

test_expect_success 'approve lands the change on official with its trailers' '
	expect_exit 0 warden --repo bench review approve 1 \
	    --as "Maint Ainer <maint@example.org>" --comment "checked the port" &&
	expect_grep "approved review 1: official is now" out &&
	git -C bench log -1 --format=%B official >msg &&
	expect_grep "^Warden-Source: agent" msg &&
	expect_grep "^Warden-Review: 1" msg &&
	expect_grep "^Reviewed-by: Maint Ainer <maint@example.org>" msg &&
	test "$(git -C bench rev-parse official^)" = "$(cat tip0)" &&
	test "$(git -C bench log -1 --format=%an official)" = Agent &&
	git -C bench show official:adapters/engines/vllm-metal.json >f &&
	expect_grep vllm-metal f &&
	git -C bench fsck --strict 2>&1
'

test_expect_success 'the approved tree is what git apply gives' '
	rm -f idx &&
	GIT_INDEX_FILE=$PWD/idx git -C bench read-tree "$(cat tip0)" &&
	GIT_INDEX_FILE=$PWD/idx git -C bench apply --cached "$PWD/new-adapter.patch" &&
	test "$(GIT_INDEX_FILE=$PWD/idx git -C bench write-tree)" = \
	    "$(git -C bench rev-parse official^{tree})"
'

test_expect_success 'the journal shows who approved what' '
	warden --repo bench journal show --kind review. --full >j &&
	expect_grep "review.submitted" j &&
	expect_grep "review.approved.*review/1" j &&
	expect_grep "Maint Ainer <maint@example.org>" j &&
	warden --repo bench journal verify
'

test_expect_success 'an approved review cannot be approved or rejected again' '
	expect_exit 2 warden --repo bench review approve 1 --as "X <x@example.org>" &&
	expect_grep "review 1 is approved, not pending" err &&
	expect_exit 2 warden --repo bench review reject 1 --reason no &&
	expect_exit 2 warden --repo bench review show 99 &&
	expect_grep "no review 99" err
'

test_expect_success 'a change that no longer applies stays pending' '
	official >tip1 &&
	expect_exit 1 warden --repo bench review approve 2 --as "M <m@example.org>" &&
	expect_grep "does not pass the gate against .official" err &&
	expect_grep "stays pending" err &&
	test "$(official)" = "$(cat tip1)" &&
	warden --repo bench review list --status pending >p &&
	expect_grep "^2 *pending" p &&
	warden --repo bench journal show --kind review.approve-failed --full >j &&
	expect_grep "review/2" j
'

test_expect_success 'reject records the reason and leaves official alone' '
	expect_exit 0 warden --repo bench review reject 2 --reason "duplicate of 1" &&
	expect_grep "rejected review 2" out &&
	test "$(official)" = "$(cat tip1)" &&
	warden --repo bench review show 2 >show &&
	expect_grep "^review 2: rejected" show &&
	expect_grep "duplicate of 1" show &&
	warden --repo bench journal show --kind review.rejected --full >j &&
	expect_grep "duplicate of 1" j
'

test_expect_success 'approve refuses to move a checked-out official branch' '
	expect_exit 0 warden --repo bench patch submit third.patch --source agent &&
	expect_grep "queued as review 3" out &&
	git -C bench checkout -q official &&
	expect_exit 3 warden --repo bench review approve 3 --as "M <m@example.org>" &&
	expect_grep "official. is checked out in the worktree .$PWD/bench.;" err &&
	git -C bench checkout -q -
'

test_expect_success 'a change queued before the tip moved lands on the new tip' '
	expect_exit 0 warden --repo bench patch submit fourth.patch --source agent &&
	expect_grep "queued as review 4" out &&
	expect_exit 0 warden --repo bench review approve 3 --as "M <m@example.org>" &&
	official >tip3 &&
	expect_exit 0 warden --repo bench review approve 4 --as "M <m@example.org>" &&
	test "$(git -C bench rev-parse official^)" = "$(cat tip3)" &&
	git -C bench cat-file -e official:adapters/engines/omlx.json &&
	git -C bench cat-file -e official:adapters/profiles/gemma.json &&
	git -C bench fsck --strict 2>&1
'

test_expect_success 'review --help names what each subcommand does' '
	warden review --help >out &&
	summary=$(sed -n "/^\$/{n;p;q;}" out) &&
	test -n "$summary" &&
	for w in list inspect smoke-test approve reject; do
		case "$summary" in
		*"$w"*) ;;
		*) echo "the summary lacks $w: $summary"; exit 1 ;;
		esac
	done
'

test_done
