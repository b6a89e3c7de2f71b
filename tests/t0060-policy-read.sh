#!/bin/sh
# t0060: files warden loads are read safely, and policy comes from the
# trusted base. A policy, adapter, profile, workload or patch that is a
# FIFO, a device (a symlink to /dev/zero), a directory or too large is
# refused at once as an input error naming the file, never read until
# memory runs out or waited on for ever. patch, review and journal
# commands take policy from the official branch's tip, whatever the
# working tree holds; lint and campaign read the working tree by design.
. "$TOP_SRCDIR/tests/lib.sh"

# Run a command that must end quickly: bounded in time and, outside the
# sanitizer build (ASan reserves terabytes of address space), in memory,
# so that a regression fails this test instead of the machine.
bounded() {
	if grep -qa __asan_init "$WARDEN"; then
		timeout 20 "$@"
	else
		(ulimit -v 1048576 && exec timeout 20 "$@")
	fi
}

test_expect_success 'setup: a benchmark repository with a queued patch' '
	warden init bench >/dev/null &&
	cd bench &&
	warden journal note "before" >/dev/null &&
	sed "s/\"schema\": 1,/\"schema\": 1 ,/" adapters/profiles/qwen3-0.6b.json >p &&
	mv p adapters/profiles/qwen3-0.6b.json &&
	git diff >../ok.patch && git checkout -q -- adapters &&
	expect_grep "schema.: 1 ," ../ok.patch &&
	expect_exit 0 warden patch check ../ok.patch
'

test_expect_success 'a policy symlinked to /dev/zero is refused at once, exit 2' '
	cd bench &&
	mv policy/warden.json ../policy.saved &&
	ln -s /dev/zero policy/warden.json &&
	expect_exit 2 bounded "$WARDEN" lint &&
	expect_grep "policy/warden.json.* is a character device, not a regular file" out &&
	expect_exit 2 bounded "$WARDEN" campaign --limit 1 &&
	expect_grep "warden: .*policy/warden.json.* is a character device, not a regular file" err
'

test_expect_success 'journal, patch and review commands ignore the working tree policy' '
	cd bench &&
	expect_exit 0 bounded "$WARDEN" journal note "with /dev/zero as policy" &&
	expect_exit 0 bounded "$WARDEN" patch check ../ok.patch &&
	expect_exit 0 bounded "$WARDEN" patch submit ../ok.patch --source community &&
	expect_exit 0 bounded "$WARDEN" review list &&
	expect_exit 0 bounded "$WARDEN" journal verify
'

test_expect_success 'a policy that is a FIFO is refused without waiting' '
	cd bench &&
	rm policy/warden.json && mkfifo policy/warden.json &&
	expect_exit 2 bounded "$WARDEN" campaign --limit 1 &&
	expect_grep "policy/warden.json.* is a FIFO, not a regular file" err &&
	expect_exit 2 bounded "$WARDEN" lint policy/warden.json &&
	expect_grep "is a FIFO" out &&
	expect_exit 0 bounded "$WARDEN" journal note "with a FIFO as policy"
'

test_expect_success 'a policy that is a directory or too large is refused' '
	cd bench &&
	rm policy/warden.json && mkdir policy/warden.json &&
	expect_exit 2 bounded "$WARDEN" campaign --limit 1 &&
	expect_grep "is a directory, not a regular file" err &&
	rmdir policy/warden.json &&
	{ printf "{\"pad\": \""; head -c 5000000 /dev/zero | tr "\\0" x; printf "\"}"; } \
	    >policy/warden.json &&
	expect_exit 2 bounded "$WARDEN" campaign --limit 1 &&
	expect_grep "policy/warden.json.* is larger than 4 MiB" err &&
	mv ../policy.saved policy/warden.json &&
	expect_exit 0 warden lint
'

test_expect_success 'adapters and profiles that are not regular files are lint problems' '
	cd bench &&
	mkfifo adapters/engines/fifo.json &&
	ln -s /dev/zero adapters/profiles/zero.json &&
	expect_exit 2 bounded "$WARDEN" lint &&
	expect_grep "adapters/engines/fifo.json.* is a FIFO" out &&
	expect_grep "adapters/profiles/zero.json.* is a character device" out &&
	rm adapters/engines/fifo.json adapters/profiles/zero.json
'

test_expect_success 'a patch that is a FIFO or a device is an input error' '
	cd bench &&
	mkfifo ../fifo.patch &&
	expect_exit 2 bounded "$WARDEN" patch check ../fifo.patch &&
	expect_grep "fifo.patch.* is a FIFO, not a regular file" err &&
	expect_exit 2 bounded "$WARDEN" patch check /dev/zero &&
	expect_grep "/dev/zero.* is a character device" err &&
	expect_exit 2 bounded sh -c "head -c 70000000 /dev/zero | \"$WARDEN\" patch check -" &&
	expect_grep "standard input.* is larger than 64 MiB" err
'

test_expect_success 'a workload that is a FIFO is refused' '
	cd bench &&
	rm -f workloads/chat.jsonl && mkfifo workloads/chat.jsonl &&
	expect_exit 2 bounded "$WARDEN" campaign --limit 1 &&
	expect_grep "workloads/chat.jsonl.* is a FIFO, not a regular file" err &&
	rm workloads/chat.jsonl
'

test_expect_success 'a deeply nested workload line reports the depth with file and line' '
	cd bench &&
	{ echo "{\"id\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}"
	  python3 -c "print(\"[\" * 5000 + \"]\" * 5000)"; } >workloads/chat.jsonl &&
	expect_exit 2 warden campaign --limit 1 &&
	expect_grep "warden: workloads/chat.jsonl:2:[0-9]*: .*depth" err &&
	expect_no_grep "not a workload line" err &&
	rm workloads/chat.jsonl
'

test_expect_success 'a NUL byte in a workload line is an error at that line, not its end' '
	cd bench &&
	ok="{\"id\": \"a\", \"messages\": []}" &&
	printf "%s\n%s\000 tail\n%s\n" "$ok" "$ok" "$ok" >workloads/chat.jsonl &&
	test "$(wc -l <workloads/chat.jsonl)" = 3 &&
	expect_exit 2 warden campaign --limit 1 &&
	expect_grep "warden: workloads/chat.jsonl:2:" err &&
	rm workloads/chat.jsonl
'

test_expect_success 'a working tree policy naming another official branch moves nothing' '
	cd bench &&
	git branch decoy official &&
	python3 - policy/warden.json <<-PY &&
	import json, sys
	p = json.load(open(sys.argv[1]))
	p["official_branch"] = "decoy"
	json.dump(p, open(sys.argv[1], "w"), indent=2)
	PY
	decoy=$(git rev-parse decoy) &&
	expect_exit 0 warden review approve 1 --as "M <m@example.org>" &&
	test "$(git rev-parse decoy)" = "$decoy" &&
	test "$(git rev-parse official)" != "$decoy" &&
	git log -1 --format=%B official >msg &&
	expect_grep "Reviewed-by: M <m@example.org>" msg &&
	expect_exit 1 warden lint &&
	expect_grep "policy/warden.json:[0-9]*:[0-9]*: .official_branch. is no longer read: the official branch is named by .git config warden.officialBranch." out &&
	git checkout -q -- policy/warden.json
'

test_expect_success 'the trusted policy must be a regular file on the official branch' '
	rm -rf sym && warden init sym >/dev/null && cd sym &&
	git checkout -q official &&
	mv policy/warden.json policy/real.json &&
	ln -s real.json policy/warden.json &&
	git add -A policy && git commit -q -m "policy as a symlink" &&
	git checkout -q - &&
	expect_exit 2 warden patch check ../ok.patch &&
	expect_grep "policy/warden.json of .official. is not a regular file (mode 120000)" err
'

test_expect_success 'git config warden.officialBranch alone names the official branch' '
	rm -rf named && warden init named >/dev/null && cd named &&
	expect_exit 0 warden patch check ../ok.patch &&
	git branch -m official release &&
	expect_exit 3 warden patch check ../ok.patch &&
	expect_grep "no official branch .official." err &&
	git config warden.officialBranch release &&
	expect_exit 0 warden patch check ../ok.patch &&
	expect_grep "checked against refs/heads/release" err
'

test_expect_success 'a policy that still names the official branch is refused at its line' '
	cd named &&
	git checkout -q release &&
	python3 - policy/warden.json <<-PY &&
	import json, sys
	p = json.load(open(sys.argv[1]))
	p["official_branch"] = "release"
	json.dump(p, open(sys.argv[1], "w"), indent=2)
	PY
	line=$(grep -n "\"official_branch\"" policy/warden.json | cut -d: -f1) &&
	git commit -q -am "the official branch named in policy too" &&
	git checkout -q --detach release &&
	expect_exit 2 warden patch check ../ok.patch &&
	expect_grep "policy of .release.: policy/warden.json:$line:[0-9]*: .official_branch. is no longer read: the official branch is named by .git config warden.officialBranch. in each clone" err
'

test_done
