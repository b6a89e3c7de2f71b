#!/bin/sh
# warden patch check reads the repository's objects wherever git keeps
# them (loose, packed, in an alternate) and changes none of them: a blob
# the patch produces that is already on disk is not touched (freshened),
# and the result tree is the one git apply gives.
. "$TOP_SRCDIR/tests/lib.sh"

# result_tree REPO PATCH: the tree `git apply --cached` makes of PATCH
# on REPO's official branch.
result_tree() {
	rm -f idx
	GIT_INDEX_FILE=$PWD/idx git -C "$1" read-tree official
	GIT_INDEX_FILE=$PWD/idx git -C "$1" apply --cached "$2"
	GIT_INDEX_FILE=$PWD/idx git -C "$1" write-tree
}

# gated_tree: the result_tree of the last `warden --json patch check`.
gated_tree() {
	sed -n 's/.*"result_tree": "\([0-9a-f]*\)".*/\1/p' out
}

test_expect_success 'a repository whose engines a.json and b.json differ' '
	git init -q repo &&
	mkdir -p repo/policy repo/adapters/engines &&
	cp "$TOP_SRCDIR/policy/warden.json" repo/policy/warden.json &&
	printf "{\n  \"name\": \"a\"\n}\n" >repo/adapters/engines/a.json &&
	printf "{\n  \"name\": \"b\"\n}\n" >repo/adapters/engines/b.json &&
	git -C repo add -A &&
	git -C repo commit -q -m base &&
	git -C repo branch official &&
	cp repo/adapters/engines/a.json repo/adapters/engines/b.json &&
	git -C repo diff >same-as-a.patch &&
	git -C repo checkout -q -- . &&
	test -s same-as-a.patch
'

test_expect_success 'a result blob already on disk is not touched' '
	find repo/.git/objects -type f -exec touch -t 200101010000 {} + &&
	touch -t 200201010000 stamp &&
	find repo/.git/objects -type f | sort >objects.before &&
	expect_exit 0 warden --repo repo --json patch check same-as-a.patch &&
	find repo/.git/objects -type f -newer stamp >touched &&
	expect_equal /dev/null touched &&
	find repo/.git/objects -type f | sort >objects.after &&
	expect_equal objects.before objects.after &&
	test "$(gated_tree)" = "$(result_tree repo "$PWD/same-as-a.patch")"
'

test_expect_success 'objects in a pack are read' '
	git -C repo gc -q --prune=now &&
	test -z "$(find repo/.git/objects/?? -type f 2>/dev/null)" &&
	expect_exit 0 warden --repo repo --json patch check same-as-a.patch &&
	test "$(gated_tree)" = "$(result_tree repo "$PWD/same-as-a.patch")"
'

test_expect_success 'objects in an alternate are read' '
	git clone -q --shared repo shared &&
	test -s shared/.git/objects/info/alternates &&
	git -C shared branch -q official origin/official &&
	expect_exit 0 warden --repo shared --json patch check same-as-a.patch &&
	test "$(gated_tree)" = "$(result_tree shared "$PWD/same-as-a.patch")"
'

test_expect_success 'a patch refused in a packed repository is still refused' '
	sed "s|adapters/engines/b.json|policy/warden.json|g" same-as-a.patch \
	    >outside.patch &&
	expect_exit 1 warden --repo shared patch check outside.patch &&
	expect_grep "^outside-allowlist policy/warden.json" out
'

test_done
