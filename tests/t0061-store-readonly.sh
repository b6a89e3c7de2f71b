#!/bin/sh
# t0061: a repository warden cannot write. The commands that only read
# (journal show and verify, review list and show) open the store read-only
# and work; a command that writes says the database cannot be written and
# why, never sqlite's "unable to open database file". Run as a user who
# may not write the repository (as root, through setpriv to nobody, since
# root writes anything).
. "$TOP_SRCDIR/tests/lib.sh"

if [ "$(id -u)" = 0 ]; then
	if ! command -v setpriv >/dev/null 2>&1; then
		echo "1..0 # SKIP root without setpriv cannot test unwritable files"
		rm -rf "$TEST_DIR"
		exit 0
	fi
	# The reader must reach the scratch directory, and libgit2 must
	# accept a repository another user owns.
	mkdir -p "$TEST_DIR/reader"
	printf "[safe]\n\tdirectory = %s\n" "$TEST_DIR/bench" \
	    >"$TEST_DIR/reader/.gitconfig"
	chmod 755 "$TEST_DIR" "$TEST_DIR/reader"
	as_reader() {
		setpriv --reuid 65534 --regid 65534 --clear-groups \
		    env HOME="$TEST_DIR/reader" "$@"
	}
else
	as_reader() { "$@"; }
fi

test_expect_success 'setup: a repository with journal entries and a queued review' '
	warden init bench >/dev/null &&
	cd bench &&
	warden journal note "first" >/dev/null &&
	warden journal note "second" >/dev/null &&
	sed "s/\"schema\": 1,/\"schema\": 1 ,/" adapters/profiles/qwen3-0.6b.json >p &&
	mv p adapters/profiles/qwen3-0.6b.json &&
	git diff >../ok.patch && git checkout -q -- adapters &&
	warden patch submit ../ok.patch --source community >/dev/null &&
	test ! -e .warden/warden.db-wal &&
	chmod -R a-w . && chmod -R a+rX .
'

test_expect_success 'journal show and verify read a store they cannot write' '
	cd bench &&
	expect_exit 0 as_reader "$WARDEN" journal show &&
	expect_grep "first" out && expect_grep "second" out &&
	expect_exit 0 as_reader "$WARDEN" journal verify &&
	expect_grep "journal intact" out &&
	test ! -e .warden/warden.db-shm
'

test_expect_success 'review list and show read it too' '
	cd bench &&
	expect_exit 0 as_reader "$WARDEN" review list &&
	expect_grep "pending" out &&
	expect_exit 0 as_reader "$WARDEN" --json review show 1 &&
	expect_grep "\"status\": \"pending\"" out
'

test_expect_success 'a command that writes says the database cannot be written' '
	cd bench &&
	expect_exit 3 as_reader "$WARDEN" journal note "third" &&
	expect_grep "warden: database .*warden.db. cannot be written: warden may not write it or its directory" err &&
	expect_no_grep "unable to open database file" err &&
	expect_exit 3 as_reader "$WARDEN" review reject 1 --reason no &&
	expect_no_grep "unable to open database file" err
'

test_expect_success 'a store left with its write-ahead log is read through it' '
	chmod -R u+w bench && cd bench &&
	{ python3 - "$WARDEN" <<-\EOF || test $? = 137; } &&
	import os, signal, sqlite3, subprocess, sys
	# A second connection keeps warden from checkpointing at its close,
	# and dies as by kill -9: the note stays in warden.db-wal.
	c = sqlite3.connect(".warden/warden.db")
	c.execute("select count(*) from journal").fetchall()
	subprocess.run([sys.argv[1], "journal", "note", "only in the log"],
	    check=True, stdout=subprocess.DEVNULL)
	os.kill(os.getpid(), signal.SIGKILL)
	EOF
	test -s .warden/warden.db-wal && test -e .warden/warden.db-shm &&
	chmod -R a-w . && chmod -R a+rX . &&
	expect_exit 0 as_reader "$WARDEN" journal show &&
	expect_grep "only in the log" out &&
	expect_exit 0 as_reader "$WARDEN" journal verify &&
	expect_grep "journal intact" out
'

# A read-only file system, made in a mount namespace of its own (root,
# or a kernel that lets users have one); skipped where there is none.
if unshare -m sh -c "mount --bind '$TEST_DIR' '$TEST_DIR' &&
    mount -o remount,bind,ro '$TEST_DIR'" 2>/dev/null; then
	have_ro=yes
else
	have_ro=no
fi
on_readonly_fs() {
	unshare -m sh -c 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" &&
	    cd "$0/bench" && exec "$@"' "$TEST_DIR" "$@"
}

test_expect_success_if $have_ro 'on a read-only file system: reads work, a write names the cause' '
	chmod -R u+w bench && rm -f bench/.warden/warden.db-wal bench/.warden/warden.db-shm &&
	(cd bench && warden journal note "checkpointed" >/dev/null) &&
	test ! -e bench/.warden/warden.db-wal &&
	expect_exit 0 on_readonly_fs "$WARDEN" journal verify &&
	expect_grep "journal intact" out &&
	expect_exit 0 on_readonly_fs "$WARDEN" review list &&
	expect_exit 3 on_readonly_fs "$WARDEN" journal note "nope" &&
	expect_grep "warden: database .*warden.db. cannot be written: the file system is read-only" err
'

test_expect_success 'cleanup: the scratch directory is writable again' '
	chmod -R u+w bench
'

test_done
