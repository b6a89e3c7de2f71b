#!/bin/sh
# bench/update-time.sh - what `warden update` costs when little is new:
#
# 1. nine pip engines from a local wheel directory (--no-index
#    --find-links), already installed, nothing new: the wall time of
#    `warden update` (median of BENCH_RUNS) and the events counted in it:
#    python processes that ran pip, runs of lsb_release and rustc (pip's
#    User-Agent probes, which pip has no option to skip), per engine, and
#    what one run of each probe takes here;
# 2. a git engine over a local mirror with a history of BENCH_COMMITS
#    commits (and refs the adapter does not track: another remote's
#    branches under refs/remotes/), then a new tag, twice: per update, the
#    wall time, the packs written into the engine's repository and their
#    bytes and objects, and whether a pack holds objects of an earlier one.
#
# Prints absolute figures and counts; asserts nothing about time. With
# WARDEN_BEFORE set to another build's warden (say, of an earlier commit:
# it runs that build's own shims), each part is set up once per build and
# the two builds' updates alternate, run by run, so that what else the
# machine does weighs on both alike; each line says whose figures it has
# ("before", "after").
set -eu
: "${WARDEN:?}" "${TOP_SRCDIR:?}" "${TOP_BUILDDIR:?}"
RUNS=${BENCH_RUNS:-5}
COMMITS=${BENCH_COMMITS:-2000}
PARTS=${BENCH_PARTS:-pip git}
BUILDS="${WARDEN_BEFORE:+before }after"
dir=$(mktemp -d "${TMPDIR:-/tmp}/warden-bench-update.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
export GIT_CONFIG_NOSYSTEM=1 HOME="$dir/home" LC_ALL=C
mkdir -p "$HOME"
git config --global user.name bench
git config --global user.email bench@example.org
git config --global init.defaultBranch main
# python3 found directly, not through a chain of pyenv's scripts
_pybin=$(python3 -c 'import os, sys; print(os.path.dirname(os.path.realpath(sys.executable)))') &&
    [ -x "$_pybin/python3" ] && PATH="$_pybin:$PATH"
export PATH
TEST_DIR=$dir
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/update-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/update/count-setup.sh"
# each warden runs the shims of the tree it was built from
unset WARDEN_SHIM_DIR
cd "$dir"

# median FILE: the median of the numbers in FILE, one a line.
median() {
	sort -n "$1" | sed -n "$(( ($(wc -l <"$1") + 1) / 2 ))p"
}

ms_now() {
	date +%s%N | cut -c1-13
}

# warden_of BUILD: the warden binary of BUILD (before, after).
warden_of() {
	if [ "$1" = before ]; then echo "$WARDEN_BEFORE"; else echo "$WARDEN"; fi
}

# --- 1. nine pip engines, nothing new -------------------------------------
pip_part() {
make_wheel wheels shared 1.0
i=1
while [ "$i" -le 9 ]; do
	make_wheel wheels "eng$i" 1.0 "shared>=1.0"
	i=$((i + 1))
done
count_setup "$dir/count"
for b in $BUILDS; do
	w=$(warden_of "$b")
	(WARDEN=$w && bench_init "pip-$b")
	i=1
	while [ "$i" -le 9 ]; do
		pip_adapter "pip-$b" "eng$i" "eng$i"
		i=$((i + 1))
	done
	update_policy "pip-$b" "$dir/wheels"
	(cd "pip-$b" && "$w" update >/dev/null 2>"$dir/first.err") ||
	    { cat "$dir/first.err" >&2; exit 1; }
	: >"$dir/pip-$b.ms"
done
k=0
while [ "$k" -lt "$RUNS" ]; do
	for b in $BUILDS; do
		count_reset
		s=$(ms_now)
		(cd "pip-$b" && count_run "$(warden_of "$b")" update >"$dir/out" 2>&1) ||
		    { cat "$dir/out" >&2; exit 1; }
		e=$(ms_now)
		echo $((e - s)) >>"$dir/pip-$b.ms"
		grep -q "^eng9: unchanged" "$dir/out" || { cat "$dir/out" >&2; exit 1; }
		echo "per engine (last run): pip processes $(count_per pip 9)," \
		    "lsb_release $(count_per lsb_release 9), rustc $(count_per rustc 9)" \
		    >"$dir/pip-$b.count"
	done
	k=$((k + 1))
done
for b in $BUILDS; do
	echo "$b: nine pip engines, nothing new: warden update median" \
	    "$(median "$dir/pip-$b.ms") ms ($RUNS runs:" \
	    "$(tr '\n' ' ' <"$dir/pip-$b.ms" | sed 's/ $//'))"
	echo "$b:   $(cat "$dir/pip-$b.count")"
done
for probe in "lsb_release -a" "rustc --version"; do
	command -v "${probe%% *}" >/dev/null || continue
	: >"$dir/probe.ms"
	k=0
	while [ "$k" -lt "$RUNS" ]; do
		s=$(ms_now); $probe >/dev/null 2>&1 || :; e=$(ms_now)
		echo $((e - s)) >>"$dir/probe.ms"
		k=$((k + 1))
	done
	echo "one run of \`$probe\` (pip's probe): median $(median "$dir/probe.ms") ms"
done
}


# --- 2. a git engine over a local mirror, new tags ------------------------
git_part() {
python3 - "$COMMITS" >"$dir/history" <<'PY'
import base64, random, sys
n = int(sys.argv[1]); random.seed(1)
out = sys.stdout.buffer
files = {}
for i in range(1, n + 1):
    out.write(b"commit refs/heads/main\nmark :%d\n" % i)
    out.write(b"committer bench <bench@example.org> %d +0000\n" % (1700000000 + i * 60))
    msg = b"commit %d\n" % i
    out.write(b"data %d\n%s" % (len(msg), msg))
    if i > 1:
        out.write(b"from :%d\n" % (i - 1))
    for k in range(3):
        f = b"src/f%03d.c" % random.randrange(300)
        body = (files.get(f, b"") + base64.b64encode(random.randbytes(900)) + b"\n")[-20000:]
        files[f] = body
        out.write(b"M 100644 inline %s\ndata %d\n%s\n" % (f, len(body), body))
    out.write(b"\n")
PY
git init -q --bare mirror.git
git -C mirror.git fast-import --quiet <"$dir/history"
# refs a mirror keeps that the adapter does not track: another remote's
# branches with history of their own
git -C mirror.git branch -q side main~50
git clone -q mirror.git work
(cd work && git checkout -q -b side origin/side &&
 j=0 && while [ "$j" -lt 200 ]; do
	head -c 3000 /dev/urandom | base64 >"side-$j"; git add "side-$j"
	git commit -q -m "side $j"; j=$((j + 1))
 done && git push -q origin side:refs/remotes/fork/side)
git -C mirror.git branch -q -D side
git -C mirror.git repack -adfq
git -C mirror.git tag -a -m b1 b1 main~2
echo "git mirror: $COMMITS commits, $(du -sk mirror.git/objects | cut -f1) KB of objects" \
    "(and refs/remotes/fork/side, 200 commits the adapter does not track)"

for b in $BUILDS; do
	(WARDEN=$(warden_of "$b") && bench_init "git-$b")
	git_mirror_adapter "git-$b" "https://example.org/bench/engine" \
	    "$dir/mirror.git"
	: >"$dir/seen-$b"
done
# git_update WHAT: each build's update, then the packs that update wrote.
git_update() {
	for b in $BUILDS; do
		packs=$dir/git-$b/.warden/envs/gitengine/git/objects/pack
		ls "$packs" 2>/dev/null | grep '\.pack$' | sort >"$dir/packs.before" || :
		s=$(ms_now)
		(cd "git-$b" && "$(warden_of "$b")" update >"$dir/out" 2>&1) ||
		    { cat "$dir/out" >&2; exit 1; }
		e=$(ms_now)
		ls "$packs" | grep '\.pack$' | sort >"$dir/packs.after"
		n=0 bytes=0 objs=0 again=0
		for p in $(comm -13 "$dir/packs.before" "$dir/packs.after"); do
			n=$((n + 1))
			bytes=$((bytes + $(wc -c <"$packs/$p")))
			git verify-pack -v "$packs/${p%.pack}.idx" |
			    awk '$2 ~ /^(commit|tree|blob|tag)$/ { print $1 }' |
			    sort >"$dir/objs"
			objs=$((objs + $(wc -l <"$dir/objs")))
			again=$((again + $(comm -12 "$dir/seen-$b" "$dir/objs" | wc -l)))
			sort -m "$dir/seen-$b" "$dir/objs" >"$dir/seen.new"
			mv "$dir/seen.new" "$dir/seen-$b"
		done
		echo "$b: $1: $((e - s)) ms, $n pack(s) written, $bytes bytes," \
		    "$objs objects, $again of them in an earlier pack" \
		    "($(sed -n 's/^gitengine: //p' "$dir/out"))"
	done
}
git_update "first update (tag b1)"
git -C mirror.git tag -a -m b2 b2 main~1
git_update "new tag b2"
git -C mirror.git tag -a -m b3 b3 main
git_update "new tag b3"
git_update "nothing new"
}

for part in $PARTS; do
	"${part}_part"
done
