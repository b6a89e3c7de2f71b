#!/bin/sh
# warden patch check: the fixture corpus through the real binary. The
# legitimate fixtures give trees byte-identical to `git apply --cached`;
# attack fixtures exit 1 with their code; malformed input exits 2; and
# checking writes nothing: not the working tree, the index, the official
# branch or the object database.
. "$TOP_SRCDIR/tests/lib.sh"
# Until runner/cmd.c lists the command, the whole script is skipped.
if ! "$WARDEN" help patch >/dev/null 2>&1; then
	echo "1..0 # SKIP warden has no 'patch' command in its table"
	rm -rf "$TEST_DIR"
	exit 0
fi
. "$TOP_SRCDIR/tests/fixtures/patches/mkbase.sh"
FIX=$TOP_SRCDIR/tests/fixtures/patches

# The state check must not change: refs, index, working tree, objects.
snapshot() {
	git -C repo for-each-ref >"$1"
	git -C repo status --porcelain --ignored >>"$1"
	sha256sum repo/.git/index >>"$1"
	git -C repo count-objects -v >>"$1"
	find repo/.git/objects -type f | sort >>"$1"
}

test_expect_success 'a benchmark repository with the fixture base tree' '
	fixture_base repo &&
	cp "$TOP_SRCDIR/policy/warden.json" repo/policy/warden.json &&
	git -C repo commit -q -am "policy" &&
	git -C repo branch official &&
	git clone -q repo gitapply &&
	git -C gitapply branch -q official origin/official &&
	snapshot before
'

test_expect_success 'legitimate fixtures are clean and apply like git apply' '
	for f in "$FIX"/ok-*.patch; do
		expect_exit 0 warden --repo repo --json patch check "$f" || exit 1
		ours=$(sed -n "s/.*\"result_tree\": \"\([0-9a-f]*\)\".*/\1/p" out)
		rm -f idx
		GIT_INDEX_FILE=$PWD/idx git -C gitapply read-tree official
		GIT_INDEX_FILE=$PWD/idx git -C gitapply apply --cached "$f"
		theirs=$(GIT_INDEX_FILE=$PWD/idx git -C gitapply write-tree)
		if [ "$ours" != "$theirs" ]; then
			echo "$f: warden $ours, git apply $theirs"
			exit 1
		fi
	done
'

test_expect_success 'an adapter patch read from stdin is clean' '
	warden --repo repo patch check - <"$FIX/ok-new-adapter.patch" >out 2>err &&
	expect_grep "1 file checked against refs/heads/official" err &&
	expect_grep "clean" err
'

test_expect_success 'attack fixtures exit 1 and name their code and path' '
	expect_exit 1 warden --repo repo patch check "$FIX/outside-policy.patch" &&
	expect_grep "^outside-allowlist policy/warden.json: " out &&
	expect_grep "patch refused: 1 violation" err &&
	expect_exit 1 warden --repo repo patch check "$FIX/symlink-via-index-line.patch" &&
	expect_grep "^symlink adapters/engines/llama.cpp.json" out &&
	expect_exit 1 warden --repo repo patch check "$FIX/rename-inside-to-outside.patch" &&
	expect_grep "^outside-allowlist workloads/ollama.json" out &&
	expect_exit 1 warden --repo repo patch check "$FIX/case-variant-policy.patch" &&
	expect_grep "^case-collision POLICY/warden.json" out &&
	expect_exit 1 warden --repo repo patch check "$FIX/unicode-nfd-variant.patch" &&
	expect_grep "^unicode-collision adapters/profiles/" out &&
	expect_exit 1 warden --repo repo patch check "$FIX/dotgit-hfs-ignorable.patch" &&
	expect_grep "^dotgit " out &&
	expect_exit 1 warden --repo repo patch check "$FIX/write-through-symlink.patch" &&
	expect_grep "^prefix-not-dir adapters/engines/old-link/chat.jsonl" out
'

test_expect_success 'every violation is reported, as a JSON array with --json' '
	expect_exit 1 warden --repo repo --json patch check "$FIX/symlink-replaced-by-dir.patch" &&
	python3 -c "
import json, sys
d = json.load(open(\"out\"))
codes = sorted(v[\"code\"] for v in d[\"violations\"])
assert d[\"ok\"] is False, d
assert codes == [\"prefix-not-dir\", \"symlink\"], codes
assert all(v[\"path\"] for v in d[\"violations\"]), d
"
'

test_expect_success 'malformed input exits 2' '
	expect_exit 2 warden --repo repo patch check "$FIX/malformed-garbage.patch" &&
	expect_grep "^malformed: cannot parse the patch" out &&
	expect_exit 2 warden --repo repo patch check "$FIX/empty-file-add.patch" &&
	expect_grep "^empty-file-unsupported adapters/engines/empty.json" out &&
	expect_exit 2 warden --repo repo patch check "$FIX/malformed-nul-byte.patch" &&
	: >empty.patch &&
	expect_exit 2 warden --repo repo patch check empty.patch &&
	expect_grep "^malformed" out
'

test_expect_success 'a missing input file is an input error' '
	expect_exit 2 warden --repo repo patch check no-such.patch
'

test_expect_success 'check changed no ref, index, file or object' '
	snapshot after &&
	expect_equal before after
'

test_expect_success 'a worktree is gated by what it changed' '
	git -C repo worktree add -q ../wt official &&
	sed "s/11434/11435/" wt/adapters/engines/ollama.json >o.tmp &&
	mv o.tmp wt/adapters/engines/ollama.json &&
	mkdir wt/adapters/engines/omlx &&
	printf "#!/bin/sh\n" >wt/adapters/engines/omlx/serve.sh &&
	chmod +x wt/adapters/engines/omlx/serve.sh &&
	expect_exit 0 warden --repo repo patch check --worktree wt &&
	expect_grep "2 files checked" err &&
	ln -s ../../policy wt/adapters/engines/escape &&
	echo "held-out" >>wt/workloads/chat.jsonl &&
	expect_exit 1 warden --repo repo patch check --worktree wt &&
	expect_grep "^symlink adapters/engines/escape" out &&
	expect_grep "^outside-allowlist workloads/chat.jsonl" out &&
	git -C repo worktree remove --force ../wt
'

# bounded CMD...: CMD, killed after 300 s where timeout(1) exists: a
# hang fails the test instead of the suite (no timing is asserted).
bounded() {
	if command -v timeout >/dev/null 2>&1; then
		timeout 300 "$@"
	else
		"$@"
	fi
}

test_expect_success 'a worktree is read bounded: a FIFO and a 6 GB file are refused by path, unread' '
	git -C repo worktree add -q ../wt2 official &&
	mkfifo wt2/adapters/engines/pipe &&
	truncate -s 6G wt2/adapters/engines/big.bin &&
	expect_exit 1 bounded "$WARDEN" --repo repo patch check --worktree wt2 &&
	expect_grep "^special-file adapters/engines/pipe" out &&
	expect_grep "^too-large adapters/engines/big.bin" out &&
	expect_exit 1 bounded "$WARDEN" --repo repo patch submit --worktree wt2 --source agent &&
	expect_grep "^special-file adapters/engines/pipe" out &&
	test -z "$(git -C repo for-each-ref refs/warden/review)" &&
	git -C repo worktree remove --force ../wt2
'

test_expect_success 'policy comes from the official branch, not the working tree' '
	sed "s|\"adapters/engines/\*\*\",|\"adapters/engines/**\", \"policy/**\",|" \
	    repo/policy/warden.json >p.tmp && mv p.tmp repo/policy/warden.json &&
	expect_grep "policy/\*\*" repo/policy/warden.json &&
	expect_exit 1 warden --repo repo patch check "$FIX/outside-policy.patch" &&
	git -C repo checkout -q -- policy/warden.json
'

test_done
