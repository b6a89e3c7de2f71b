#!/bin/sh
# bench/allowlist-apply.sh - the allowlist gate on a 1,000-file patch:
# `warden patch check` (parse, decide, in-memory apply, result diff and
# re-check) next to `git apply --check` and `git apply --cached` on the
# same patch, in the same run. Prints the median of each and the ratios;
# asserts nothing about time.
set -eu
: "${WARDEN:?}" "${TOP_SRCDIR:?}"
FILES=${BENCH_FILES:-1000}
RUNS=${BENCH_RUNS:-5}
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

# median_ms CMD...: run CMD $RUNS times, print the median wall time in ms.
median_ms() {
	_t=""
	_k=0
	while [ "$_k" -lt "$RUNS" ]; do
		_s=$(date +%s%N)
		"$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }
		_e=$(date +%s%N)
		_t="$_t $(( (_e - _s) / 1000000 ))"
		_k=$((_k + 1))
	done
	echo $_t | tr ' ' '\n' | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"
}
cached() {
	rm -f "$dir/index"
	GIT_INDEX_FILE=$dir/index git -C "$repo" read-tree HEAD
	GIT_INDEX_FILE=$dir/index git -C "$repo" apply --cached "$dir/big.patch"
}
cd "$repo"
w=$(median_ms "$WARDEN" patch check "$dir/big.patch")
c=$(median_ms git apply --check "$dir/big.patch")
a=$(median_ms cached)
echo "warden patch check:  ${w} ms"
echo "git apply --check:   ${c} ms"
echo "git apply --cached:  ${a} ms (incl. read-tree)"
awk -v w="$w" -v c="$c" -v a="$a" 'BEGIN {
	if (c < 1) c = 1; if (a < 1) a = 1;
	printf "ratio warden/git-apply-check:  %.2f\n", w / c;
	printf "ratio warden/git-apply-cached: %.2f\n", w / a }'
