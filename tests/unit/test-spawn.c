/*
 * test-spawn.c - spawn starts programs in their own group with output in a
 * log, reports exec failures and exit statuses, and stop leaves no process
 * of the group behind, grandchildren that ignore SIGTERM included.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "spawn.h"
#include "util.h"

static char tmpdir[64];

static int
setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-spawn.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static int
teardown(void **state)
{
	char *cmd = xasprintf("rm -rf '%s'", tmpdir);

	assert_int_equal(system(cmd), 0);
	free(cmd);
	return 0;
}

static void
wait_exit(struct spawn_proc *p)
{
	uint64_t deadline = mono_ns() + 60000000000ULL;	/* only a defect waits this long */

	while (!spawn_poll(p)) {
		assert_true(mono_ns() < deadline);
		usleep(2000);
	}
}

/* Wait for a file holding a pid; return the pid. */
static pid_t
read_pidfile(const char *path)
{
	uint64_t deadline = mono_ns() + 60000000000ULL;	/* only a defect waits this long */
	struct buf b = BUF_INIT;
	struct werr *err;
	pid_t pid = 0;

	for (;;) {
		buf_reset(&b);
		err = file_read(&b, path);
		if (err == NULL && b.len > 0 && b.data[b.len - 1] == '\n') {
			pid = (pid_t)atol(b.data);
			break;
		}
		werr_free(err);
		assert_true(mono_ns() < deadline);
		usleep(2000);
	}
	buf_free(&b);
	return pid;
}

static void
test_exit_status_is_reported(void **state)
{
	char *argv_ok[] = { "sh", "-c", "exit 3", NULL };
	char *argv_sig[] = { "sh", "-c", "kill -SEGV $$", NULL };
	struct spawn_opts o = { 0 };
	struct spawn_proc p;
	struct buf b = BUF_INIT;

	o.argv = argv_ok;
	assert_null(spawn_start(&p, &o));
	assert_true(p.pid > 0);
	wait_exit(&p);
	spawn_status_describe(&b, p.status);
	assert_string_equal(buf_cstr(&b), "exit status 3");
	assert_null(spawn_stop(&p, 100));

	o.argv = argv_sig;
	assert_null(spawn_start(&p, &o));
	wait_exit(&p);
	buf_reset(&b);
	spawn_status_describe(&b, p.status);
	assert_string_equal(buf_cstr(&b), "killed by signal 11 (SIGSEGV)");
	buf_free(&b);
}

static void
test_exec_failure_is_an_error(void **state)
{
	char *argv[] = { "/nonexistent/warden-engine", "--port", "1", NULL };
	struct spawn_opts o = { 0 };
	struct spawn_proc p;
	struct werr *err;

	o.argv = argv;
	err = spawn_start(&p, &o);
	assert_non_null(err);
	assert_non_null(strstr(err->msg, "exec '/nonexistent/warden-engine'"));
	assert_int_equal(err->exit, WEXIT_ENV);
	assert_true(p.exited);
	werr_free(err);
}

static void
test_log_env_and_cwd(void **state)
{
	char *argv[] = { "sh", "-c",
	    "echo out; echo err >&2; echo \"v=$WARDEN_T\"; pwd", NULL };
	char *env[] = { "WARDEN_T=hello", NULL };
	struct spawn_opts o = { 0 };
	struct spawn_proc p;
	struct buf b = BUF_INIT;
	char *log = path_join(tmpdir, "engine.log");
	char *want = xasprintf("out\nerr\nv=hello\n%s\n", tmpdir);

	o.argv = argv;
	o.env_add = env;
	o.cwd = tmpdir;
	o.log_path = log;
	assert_null(spawn_start(&p, &o));
	wait_exit(&p);
	assert_true(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0);
	assert_null(file_read(&b, log));
	assert_string_equal(buf_cstr(&b), want);
	assert_null(getenv("WARDEN_T"));
	buf_free(&b);
	free(log);
	free(want);
}

/* The fake engine: ignores nothing itself, forks a grandchild that
 * ignores SIGTERM, records both pids, then serves forever. */
static void
start_forking_engine(struct spawn_proc *p, pid_t *grandchild, int leader_exits)
{
	char *gpid = path_join(tmpdir, "grandchild.pid");
	char *script = xasprintf(
	    "sh -c 'trap \"\" TERM; echo $$ >\"$0.tmp\"; "
	    "mv \"$0.tmp\" \"$0\"; while :; do sleep 1; done' '%s' & %s",
	    gpid, leader_exits ? "exit 0" : "while :; do sleep 1; done");
	char *argv[] = { "sh", "-c", script, NULL };
	struct spawn_opts o = { 0 };

	unlink(gpid);
	o.argv = argv;
	assert_null(spawn_start(p, &o));
	*grandchild = read_pidfile(gpid);
	assert_true(*grandchild > 0 && *grandchild != p->pid);
	assert_int_equal(getpgid(*grandchild), p->pid);
	free(gpid);
	free(script);
}

static void
test_stop_kills_grandchildren(void **state)
{
	struct spawn_proc p;
	pid_t gc;
	uint64_t t0, dt;

	start_forking_engine(&p, &gc, 0);
	assert_false(spawn_poll(&p));
	assert_true(spawn_group_alive(p.pid));
	t0 = mono_ns();
	assert_null(spawn_stop(&p, 300));
	dt = mono_ns() - t0;
	/* The grandchild ignored SIGTERM: only SIGKILL after the grace
	 * period could end it. */
	assert_true(dt >= 300000000ULL);
	assert_true(p.exited);
	assert_int_equal(kill(gc, 0), -1);
	assert_int_equal(errno, ESRCH);
	assert_false(spawn_group_alive(p.pid));
}

static void
test_stop_after_leader_exit_kills_orphans(void **state)
{
	struct spawn_proc p;
	pid_t gc;

	start_forking_engine(&p, &gc, 1);
	wait_exit(&p);
	assert_true(WIFEXITED(p.status));
	assert_int_equal(kill(gc, 0), 0);
	assert_true(spawn_group_alive(p.pid));
	assert_null(spawn_stop(&p, 100));
	assert_int_equal(kill(gc, 0), -1);
	assert_int_equal(errno, ESRCH);
	assert_false(spawn_group_alive(p.pid));
}

static void
test_term_is_enough_for_a_polite_engine(void **state)
{
	char *argv[] = { "sh", "-c", "while :; do sleep 1; done", NULL };
	struct spawn_opts o = { 0 };
	struct spawn_proc p;
	uint64_t t0;

	o.argv = argv;
	assert_null(spawn_start(&p, &o));
	t0 = mono_ns();
	/* SIGTERM ends it: the stop does not wait out the minute of grace
	 * (WTERMSIG says the same without a clock) */
	assert_null(spawn_stop(&p, 60000));
	assert_true(mono_ns() - t0 < 30000000000ULL);
	assert_true(WIFSIGNALED(p.status));
	assert_int_equal(WTERMSIG(p.status), SIGTERM);
}

#ifdef __linux__
/* Gone, or a zombie waiting for its reaper (us, as subreaper)? */
static int
process_gone(pid_t pid)
{
	char path[64], line[512], *p;
	FILE *f;
	int zombie = 0;

	if (kill(pid, 0) == -1 && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 1;
	if (fgets(line, sizeof(line), f) != NULL &&
	    (p = strrchr(line, ')')) != NULL)
		zombie = p[2] == 'Z';
	fclose(f);
	if (zombie)
		(void)waitpid(pid, NULL, WNOHANG);
	return zombie;
}

/* The parent of pid, from /proc/PID/stat; -1 if unknown. */
static pid_t
getppid_of(pid_t pid)
{
	char path[64], line[512], *p;
	long ppid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) != NULL &&
	    (p = strrchr(line, ')')) != NULL &&
	    sscanf(p + 1, " %*c %ld", &ppid) != 1)
		ppid = -1;
	fclose(f);
	return (pid_t)ppid;
}
#endif

/* A warden killed with -9 cannot stop its engine; the engine must
 * still go (Linux: the parent-death signal). */
static void
test_engine_dies_with_killed_parent(void **state)
{
#ifdef __linux__
	char *argv[] = { "sh", "-c", "while :; do sleep 1; done", NULL };
	struct spawn_opts o = { 0 };
	struct spawn_proc p;
	uint64_t deadline;
	int fds[2];
	pid_t mid, engine = 0;

	assert_int_equal(pipe(fds), 0);
	mid = fork();
	assert_true(mid >= 0);
	if (mid == 0) {
		o.argv = argv;
		if (spawn_start(&p, &o) != NULL)
			_exit(1);
		if (write(fds[1], &p.pid, sizeof(p.pid)) != sizeof(p.pid))
			_exit(1);
		for (;;)
			pause();
	}
	assert_int_equal(read(fds[0], &engine, sizeof(engine)),
	    sizeof(engine));
	assert_false(process_gone(engine));
	kill(mid, SIGKILL);
	waitpid(mid, NULL, 0);
	deadline = mono_ns() + 60000000000ULL;
	while (!process_gone(engine) && mono_ns() < deadline)
		usleep(10000);
	assert_true(process_gone(engine));
	close(fds[0]);
	close(fds[1]);
#else
	skip();
#endif
}

/* env replaces the whole environment; stdin is /dev/null. */
static void
test_whole_env_and_null_stdin(void **state)
{
	char *argv[] = { "/bin/sh", "-c",
	    "echo \"v=$WARDEN_T h=${HOME-unset}\"; cat; echo end", NULL };
	char *env[] = { "WARDEN_T=only", NULL };
	struct spawn_opts o = { 0 };
	struct spawn_proc p;
	struct buf b = BUF_INIT;
	char *log = path_join(tmpdir, "env.log");

	unlink(log);
	o.argv = argv;
	o.env = env;
	o.log_path = log;
	assert_null(spawn_start(&p, &o));
	wait_exit(&p);
	assert_null(file_read(&b, log));
	assert_string_equal(buf_cstr(&b), "v=only h=unset\nend\n");
	buf_free(&b);
	free(log);
}

#ifdef __linux__
/* A program whose child is a daemon that left the group (setsid): the
 * pid file names the daemon. wait_leader: the leader stays (else it exits
 * at once and the daemon is orphaned, back to us as subreaper). */
static void
start_with_daemon(struct spawn_proc *p, pid_t *daemon, const char *name,
    int wait_leader)
{
	char *gpid = path_join(tmpdir, name);
	char *script = xasprintf("setsid sh -c 'echo $$ >\"$0.tmp\"; "
	    "mv \"$0.tmp\" \"$0\"; exec sleep 300' '%s' &%s", gpid,
	    wait_leader ? " sleep 300" : " :");
	char *argv[] = { "sh", "-c", script, NULL };
	struct spawn_opts o = { 0 };

	unlink(gpid);
	o.argv = argv;
	assert_null(spawn_start(p, &o));
	*daemon = read_pidfile(gpid);
	assert_int_not_equal(getpgid(*daemon), p->pid);
	assert_int_equal(getsid(*daemon), *daemon);
	free(gpid);
	free(script);
}
#endif

/* spawn_stop stops a daemon that left the group, whether its parent is
 * still there or it was orphaned, and spares another program's. */
static void
test_stop_kills_a_daemon(void **state)
{
#ifdef __linux__
	struct spawn_proc a, b, c;
	pid_t da, db, dc;

	start_with_daemon(&a, &da, "daemon-a.pid", 1);
	start_with_daemon(&b, &db, "daemon-b.pid", 1);
	start_with_daemon(&c, &dc, "daemon-c.pid", 0);
	/* c's leader exits at once: its daemon comes back to us. */
	while (!spawn_poll(&c))
		usleep(1000);
	assert_int_equal(getppid_of(dc), getpid());
	assert_null(spawn_stop(&a, 200));
	assert_true(process_gone(da));
	assert_false(process_gone(db));
	assert_false(process_gone(b.pid));
	assert_null(spawn_stop(&c, 200));
	assert_true(process_gone(dc));
	assert_false(process_gone(db));
	assert_null(spawn_stop(&b, 200));
	assert_true(process_gone(db));
	assert_true(process_gone(b.pid));
#else
	skip();
#endif
}

/* What a program left running is found by the descendant reaper, which
 * stops everything at once. */
static void
test_reap_descendants_kills_a_daemon(void **state)
{
#ifdef __linux__
	struct spawn_proc p;
	unsigned killed = 0;
	pid_t daemon;

	start_with_daemon(&p, &daemon, "daemon.pid", 1);
	assert_null(spawn_reap_descendants(&killed));
	assert_true(killed >= 2);
	assert_true(process_gone(daemon));
	assert_null(spawn_stop(&p, 200));
#else
	skip();
#endif
}

/* spawn_run waits for the end, reports the status, and at its timeout
 * stops the program and whatever it left running in its group. */
static void
test_run_to_the_end_or_the_timeout(void **state)
{
	char *pidfile = xasprintf("%s/run-bg.pid", tmpdir);
	char *script = xasprintf("sleep 30 & echo $! >%s; wait", pidfile);
	char *argv_exit[] = { "sh", "-c", "exit 4", NULL };
	char *argv_orphan[] = { "sh", "-c", "sleep 30 & exit 0", NULL };
	char *argv_slow[] = { "sh", "-c", script, NULL };
	struct spawn_opts o = { 0 };
	int status, timed_out;
	uint64_t t0;
	pid_t bg;

	o.argv = argv_exit;
	assert_null(spawn_run(&o, 5000, 100, &status, &timed_out));
	assert_false(timed_out);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 4);

	/* exits at once; the sleep it left behind is stopped with it */
	o.argv = argv_orphan;
	t0 = mono_ns();
	assert_null(spawn_run(&o, 20000, 100, &status, &timed_out));
	assert_false(timed_out);
	assert_int_equal(status, 0);
	assert_true(mono_ns() - t0 < 10000000000ULL);

	o.argv = argv_slow;
	t0 = mono_ns();
	assert_null(spawn_run(&o, 300, 100, &status, &timed_out));
	assert_true(timed_out);
	assert_true(mono_ns() - t0 < 10000000000ULL);
	bg = read_pidfile(pidfile);
	assert_int_equal(kill(bg, 0), -1);
	assert_int_equal(errno, ESRCH);
	free(script);
	free(pidfile);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_status_is_reported),
		cmocka_unit_test(test_exec_failure_is_an_error),
		cmocka_unit_test(test_log_env_and_cwd),
		cmocka_unit_test(test_stop_kills_grandchildren),
		cmocka_unit_test(test_stop_after_leader_exit_kills_orphans),
		cmocka_unit_test(test_term_is_enough_for_a_polite_engine),
		cmocka_unit_test(test_engine_dies_with_killed_parent),
		cmocka_unit_test(test_whole_env_and_null_stdin),
		cmocka_unit_test(test_stop_kills_a_daemon),
		cmocka_unit_test(test_reap_descendants_kills_a_daemon),
		cmocka_unit_test(test_run_to_the_end_or_the_timeout),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
