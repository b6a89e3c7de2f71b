#!/bin/sh
# bench/allowlist-apply.sh - the allowlist gate on a 1,000-file patch:
# `warden patch check` (parse, decide, in-memory apply, result diff and
# re-check) next to `git apply --check` and `git apply --cached` on the
# same patch, in the same run, and warden's fixed cost: starting (`warden
# --help` returns before libgit2 is set up) and starting with libgit2 set
# up (`warden --version`). The base is there twice: as a fresh commit
# leaves it (a loose object per file) and packed (as a clone or `git gc`
# leaves it). Each round runs every command once, in turn, so that a
# change of load weighs on all alike; each figure is the median of RUNS
# rounds. Prints the medians and the ratios; asserts nothing.
set -eu
: "${WARDEN:?}" "${TOP_SRCDIR:?}"
FILES=${BENCH_FILES:-1000}
RUNS=${BENCH_RUNS:-9}
dir=$(mktemp -d "${TMPDIR:-/tmp}/warden-bench-allowlist.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
export GIT_CONFIG_NOSYSTEM=1 HOME="$dir" LC_ALL=C
git config --global user.name bench
git config --global user.email bench@example.org

repo=$dir/repo
git init -q "$repo"
mkdir -p "$repo/policy" "$repo/adapters/engines/gen"
sed 's/"max_files": [0-9]*/"max_files": 5000/; s/"max_bytes": [0-9]*/"max_bytes": 67108864/' \
    "$TOP_SRCDIR/policy/warden.json" >"$repo/policy/warden.json"
i=0
while [ "$i" -lt "$FILES" ]; do
	printf '{\n  "name": "engine-%d",\n  "source": "pip",\n  "port": %d\n}\n' \
	    "$i" $((8000 + i)) >"$repo/adapters/engines/gen/e$i.json"
	i=$((i + 1))
done
git -C "$repo" add -A
git -C "$repo" commit -q -m base
git -C "$repo" branch -q official
sed -i 's/"source": "pip"/"source": "brew"/' "$repo"/adapters/engines/gen/*.json
git -C "$repo" diff >"$dir/big.patch"
git -C "$repo" checkout -q -- .
echo "patch: $FILES files, $(wc -c <"$dir/big.patch") bytes"

# ms CMD...: run CMD once, print its wall time in ms (0.1 ms steps).
ms() {
	_s=$(date +%s%N)
	"$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }
	_e=$(date +%s%N)
	echo $(( (_e - _s) / 100000 ))
}
# median FILE: the median of the numbers in FILE, in ms.
median() {
	sort -n "$1" | awk -v n="$RUNS" 'NR == int((n + 1) / 2) {
		printf "%.1f", $1 / 10 }'
}
# cached REPO: read-tree, then apply to the index.
cached() {
	rm -f "$dir/index"
	GIT_INDEX_FILE=$dir/index git -C "$1" read-tree HEAD
	GIT_INDEX_FILE=$dir/index git -C "$1" apply --cached "$dir/big.patch"
}
cp -R "$repo" "$dir/packed"
git -C "$dir/packed" gc -q
k=0
while [ "$k" -lt "$RUNS" ]; do
	for r in repo packed; do
		cd "$dir/$r"
		ms "$WARDEN" patch check "$dir/big.patch" >>"$dir/warden.$r"
		ms git apply --check "$dir/big.patch" >>"$dir/check.$r"
		ms cached "$dir/$r" >>"$dir/cached.$r"
	done
	ms "$WARDEN" --help >>"$dir/start"
	ms "$WARDEN" --version >>"$dir/init"
	k=$((k + 1))
done
cd "$dir"
echo "warden --help:       $(median "$dir/start") ms (starting: loading libraries)"
echo "warden --version:    $(median "$dir/init") ms (starting, libgit2 set up)"
for r in repo packed; do
	w=$(median "$dir/warden.$r")
	c=$(median "$dir/check.$r")
	a=$(median "$dir/cached.$r")
	[ "$r" = repo ] && what="loose objects" || what="packed objects"
	echo "-- base in $what (median of $RUNS)"
	echo "warden patch check:  $w ms"
	echo "git apply --check:   $c ms"
	echo "git apply --cached:  $a ms (incl. read-tree)"
	awk -v w="$w" -v c="$c" -v a="$a" 'BEGIN {
		if (c < 0.1) c = 0.1; if (a < 0.1) a = 0.1;
		printf "ratio warden/git-apply-check:  %.2f\n", w / c;
		printf "ratio warden/git-apply-cached: %.2f\n", w / a }'
done
