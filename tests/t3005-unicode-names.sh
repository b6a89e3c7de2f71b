#!/bin/sh
# Adapters and profiles named in other scripts pass the gate (patch check,
# patch submit, pr-check) through the real binary; names that a macOS
# volume would take for one existing name, and code points that are not
# letters, marks or digits, are still refused.
. "$TOP_SRCDIR/tests/lib.sh"

GREEK=$(printf 'adapters/profiles/\316\233\316\254\316\274\316\264\316\261.json')	# Λάμδα
GREEK_LOWER=$(printf 'adapters/profiles/\316\273\316\254\316\274\316\264\316\261.json')	# λάμδα
GREEK_NFD=$(printf 'adapters/profiles/\316\233\316\261\314\201\316\274\316\264\316\261.json')
CJK=$(printf 'adapters/profiles/\351\200\232\344\271\211\345\215\203\351\227\256-7b.json')	# 通义千问-7b
CJK_FULLSTOP=$(printf 'adapters/profiles/\351\200\232\344\271\211\343\200\202.json')	# 通义。

# patch_adding PATH FILE: a patch adding PATH to the official tip.
patch_adding() {
	rm -rf wt && git clone -q -b official bench wt &&
	mkdir -p "wt/$(dirname "$1")" &&
	printf '{\n  "model": "x"\n}\n' >"wt/$1" &&
	git -C wt add -A && git -C wt diff --cached >"$2"
}

test_expect_success 'setup: a repository whose official tip has a Greek profile' '
	make_bench_repo bench &&
	git -C bench checkout -q official &&
	printf "{}\n" >"bench/$GREEK" &&
	git -C bench add -A && git -C bench commit -q -m "a Greek profile" &&
	git -C bench checkout -q --detach official
'

test_expect_success 'a profile named in Chinese is clean, and queues' '
	patch_adding "$CJK" cjk.patch &&
	expect_exit 0 warden --repo bench patch check cjk.patch &&
	expect_exit 0 warden --repo bench patch submit cjk.patch --source community &&
	expect_grep "^queued as review 1" out
'

test_expect_success 'editing the Greek-named profile is clean' '
	rm -rf wt && git clone -q -b official bench wt &&
	echo "{\"model\": \"y\"}" >"wt/$GREEK" &&
	git -C wt diff >edit.patch &&
	expect_exit 0 warden --repo bench patch check edit.patch
'

test_expect_success 'its lower-case and NFD twins are refused as collisions' '
	patch_adding "$GREEK_LOWER" lower.patch &&
	expect_exit 1 warden --repo bench --json patch check lower.patch &&
	expect_grep "\"code\": \"case-collision\"" out &&
	patch_adding "$GREEK_NFD" nfd.patch &&
	expect_exit 1 warden --repo bench --json patch check nfd.patch &&
	expect_grep "\"code\": \"unicode-collision\"" out
'

test_expect_success 'CJK punctuation in a name is still a bad path' '
	patch_adding "$CJK_FULLSTOP" stop.patch &&
	expect_exit 1 warden --repo bench patch check stop.patch &&
	expect_grep "^bad-path .*U+3002" out
'

# lint keeps its own rule for the "name" inside an adapter or profile
# (ASCII letters, digits, '.', '_', '-'); a file beside them is not linted.
test_expect_success 'pr-check passes a pull request adding files under a Chinese name' '
	git -C bench checkout -q -b cjk official &&
	dir=$(printf "adapters/engines/\351\200\232\344\271\211\345\215\203\351\227\256") &&
	mkdir -p "bench/$dir" && echo "notes" >"bench/$dir/README.md" &&
	git -C bench add -A && git -C bench commit -q -m "cjk" &&
	git -C bench checkout -q - &&
	expect_exit 0 warden --repo bench pr-check official cjk
'

test_done
