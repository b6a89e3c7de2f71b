/*
 * test-campaign-engine.c - engine lifecycle against a fake engine
 * (tests/fixtures/engines/fake-engine.py): argv templates, own HOME, ready,
 * crash before and after ready with status and log tail, ready timeout,
 * wrong model, port checks, and no process left after stop.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "adapter.h"
#include "engine.h"
#include "memsample.h"
#include "util.h"

static char tmpdir[64];
static const char *srcdir;

static int
setup(void **state)
{
	srcdir = getenv("TOP_SRCDIR");
	if (srcdir == NULL)
		srcdir = ".";
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-engine.XXXXXX");
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

struct fixture {
	struct adapter *adapter;
	struct profile *profile;
	struct engine_params params;
	char *env_dir, *log_path;
};

/*
 * An adapter running the fake engine with extra argv (a JSON list tail),
 * extra serve fields (a JSON member list tail) and extra fields of the
 * profile's entry for it.
 */
static void
fixture_init_full(struct fixture *f, const char *extra, const char *serve,
    const char *entry, const char *name)
{
	char *text, *profile;

	profile = xasprintf(
	    "{\"schema\": 1, \"name\": \"tiny\", \"hf_id\": \"Org/Tiny-1B\","
	    " \"context_length\": 4096, \"chat_template\": \"chatml\","
	    " \"thinking\": {\"supported\": false},"
	    " \"engines\": {\"fake\": {\"model\": \"org/tiny-1b\"%s}}}",
	    entry ? entry : "");
	memset(f, 0, sizeof(*f));
	text = xasprintf(
	    "{\"schema\": 1, \"name\": \"fake\", \"api\": \"openai-chat\","
	    " \"source\": {\"kind\": \"none\"},"
	    " \"serve\": {\"argv\": [\"python3\","
	    " \"{repo}/tests/fixtures/engines/fake-engine.py\","
	    " \"--host\", \"{host}\", \"--port\", \"{port}\","
	    " \"--model\", \"{model}\"%s],"
	    " \"env\": {\"FAKE_ENV\": \"ctx={ctx} c={concurrency} s={split}\"},"
	    " \"health\": \"/health\", \"models_path\": \"/v1/models\","
	    " \"ready_timeout_s\": 20, \"ctx\": 4096,"
	    " \"splits\": {\"agent\": {\"ctx\": 16384}}%s}}",
	    extra ? extra : "", serve ? serve : "");
	if (adapter_load_buffer(&f->adapter, text, strlen(text), "fake",
	    NULL) != NULL)
		fail_msg("adapter did not load: %s", text);
	free(text);
	assert_null(profile_load_buffer(&f->profile, profile, strlen(profile),
	    "tiny", NULL));
	free(profile);
	f->env_dir = xasprintf("%s/envs/fake", tmpdir);
	f->log_path = xasprintf("%s/logs/run1/fake/%s.log", tmpdir, name);
	f->params.adapter = f->adapter;
	f->params.profile = f->profile;
	f->params.split = "agent";
	f->params.concurrency = 8;
	f->params.repo_root = srcdir;
	f->params.env_dir = f->env_dir;
	f->params.log_path = f->log_path;
	f->params.stop_grace_ms = 2000;
}

static void
fixture_init(struct fixture *f, const char *extra, const char *name)
{
	fixture_init_full(f, extra, NULL, NULL, name);
}

static void
fixture_free(struct fixture *f)
{
	adapter_free(f->adapter);
	profile_free(f->profile);
	free(f->env_dir);
	free(f->log_path);
}

static void
test_expand_templates(void **state)
{
	struct engine_vars v = { 0 };
	struct buf b = BUF_INIT;
	struct werr *err;

	v.port = "8080";
	v.model = "m";
	assert_null(engine_expand(&b, "--port={port} {model}{ctx}x", &v));
	assert_string_equal(buf_cstr(&b), "--port=8080 mx");
	buf_reset(&b);
	err = engine_expand(&b, "--x {nope}", &v);
	assert_non_null(err);
	assert_string_equal(err->msg, "unknown placeholder '{nope}' in '--x {nope}'");
	werr_free(err);
	buf_reset(&b);
	err = engine_expand(&b, "--x {port", &v);
	assert_non_null(err);
	assert_int_equal(err->exit, WEXIT_INPUT);
	werr_free(err);
	buf_free(&b);
}

/* Every placeholder the adapter schema allows has a value to expand to:
 * the schema's list and the engine's variables agree. */
static void
test_every_known_placeholder_expands(void **state)
{
	static const char *const names[] = {
		"port", "host", "model", "model_path", "model_dir",
		"model_repo", "hf_id", "models_dir", "ctx", "home", "env_dir",
		"scratch", "log_dir", "adapter_dir", "repo", "concurrency",
		"split",
	};
	struct engine_vars v = { 0 };
	struct buf b = BUF_INIT;
	char *t;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		t = xasprintf("{%s}", names[i]);
		assert_true(adapter_placeholder_known(names[i], strlen(names[i])));
		assert_null(engine_expand(&b, t, &v));
		free(t);
	}
	assert_false(adapter_placeholder_known("models", 6));
	buf_free(&b);
}

static void
test_ready_engine_serves_profile_model(void **state)
{
	struct fixture f;
	struct engine *e;
	struct buf log = BUF_INIT;
	char *want;
	pid_t pid;

	fixture_init(&f, NULL, "ready");
	assert_null(engine_start(&e, &f.params));
	assert_string_equal(engine_state_name(e->state), "ready");
	assert_string_equal(e->served_model, "org/tiny-1b");
	assert_true(e->port > 0);
	assert_true(e->ready_ns >= e->started_ns);
	assert_int_equal(memsample_tree_listens(e->proc.pid, e->port), 1);
	assert_int_equal(memsample_tree_listens(getpid(), e->port), 0);
	pid = e->proc.pid;
	assert_null(engine_stop(e));
	assert_string_equal(engine_state_name(e->state), "stopped");
	assert_false(spawn_group_alive(pid));
	assert_null(file_read(&log, f.log_path));
	want = xasprintf("HOME=%s/home\n", f.env_dir);
	assert_non_null(strstr(log.data, want));
	free(want);
	want = xasprintf("XDG_CACHE_HOME=%s/home/.cache\n", f.env_dir);
	assert_non_null(strstr(log.data, want));
	free(want);
	/* the agent split raises the context; c and split expand */
	assert_non_null(strstr(log.data, "FAKE_ENV=ctx=16384 c=8 s=agent\n"));
	want = xasprintf("--port %d --model org/tiny-1b", e->port);
	assert_non_null(strstr(log.data, want));
	assert_non_null(strstr(e->argv_text, want));
	free(want);
	buf_free(&log);
	engine_free(e);
	fixture_free(&f);
}

/* An engine that exits before it answers (it cannot load its model)
 * never served: not_ready, with its exit status and log tail. */
static void
test_exit_before_ready_is_not_ready(void **state)
{
	struct fixture f;
	struct engine *e;

	fixture_init(&f, ", \"--exit-before-ready\", \"3\"", "early");
	assert_null(engine_start(&e, &f.params));
	assert_string_equal(engine_state_name(e->state), "not_ready");
	assert_non_null(strstr(e->detail,
	    "exited before it was ready: exit status 3"));
	assert_non_null(strstr(e->detail, "fatal: cannot load model"));
	assert_null(e->served_model);
	engine_free(e);
	fixture_free(&f);
}

/* A program that cannot be executed never started: start_failed. */
static void
test_missing_program_is_start_failed(void **state)
{
	struct fixture f;
	struct engine *e;

	fixture_init(&f, NULL, "missing");
	free(f.adapter->serve.argv.v[0]);
	f.adapter->serve.argv.v[0] = xstrdup("/nonexistent/engine-server");
	assert_null(engine_start(&e, &f.params));
	assert_string_equal(engine_state_name(e->state), "start_failed");
	assert_non_null(strstr(e->detail, "exec '/nonexistent/engine-server'"));
	assert_non_null(strstr(e->detail, "No such file or directory"));
	engine_free(e);
	fixture_free(&f);
}

static void
test_ready_timeout_is_not_ready(void **state)
{
	struct fixture f;
	struct engine *e;
	uint64_t t0 = mono_ns();

	fixture_init(&f, ", \"--never-ready\"", "never");
	f.params.ready_timeout_s = 4;
	assert_null(engine_start(&e, &f.params));
	assert_string_equal(engine_state_name(e->state), "not_ready");
	/* not before the timeout; after it, a bound only a defect (an
	 * engine waited for forever) reaches, whatever the load */
	assert_true(mono_ns() - t0 >= 4000000000ULL);
	assert_true(mono_ns() - t0 < 60000000000ULL);
	assert_non_null(strstr(e->detail, "'/health' did not answer 200"));
	assert_non_null(strstr(e->detail, "last: 503"));
	engine_free(e);
	fixture_free(&f);
}

static void
test_wrong_model_is_an_outcome(void **state)
{
	struct fixture f;
	struct engine *e;

	fixture_init(&f, ", \"--serve-model\", \"org/other-7b\"", "wrong");
	assert_null(engine_start(&e, &f.params));
	assert_string_equal(engine_state_name(e->state), "wrong_model");
	assert_string_equal(e->served_model, "org/other-7b");
	assert_string_equal(e->detail,
	    "serves 'org/other-7b', the profile names 'org/tiny-1b'");
	engine_free(e);
	fixture_free(&f);
}

static void
test_crash_after_ready_is_seen_with_signal(void **state)
{
	struct fixture f;
	struct engine *e;
	uint64_t deadline;

	/* the crash comes 1.5 s after the engine first answered /v1/models */
	fixture_init(&f, ", \"--crash-after\", \"1.5\"", "crash");
	assert_null(engine_start(&e, &f.params));
	assert_string_equal(engine_state_name(e->state), "ready");
	deadline = mono_ns() + 60000000000ULL;
	while (engine_alive(e) && mono_ns() < deadline)
		usleep(20000);
	assert_string_equal(engine_state_name(e->state), "server_crash");
	assert_non_null(strstr(e->detail, "killed by signal 11 (SIGSEGV)"));
	assert_non_null(strstr(e->detail, "segfault (simulated)"));
	engine_free(e);
	fixture_free(&f);
}

static void
test_taken_port_is_port_conflict(void **state)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	struct fixture f;
	struct engine *e;
	int fd;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	fixture_init(&f, NULL, "taken");
	f.params.port = ntohs(sa.sin_port);
	assert_null(engine_start(&e, &f.params));
	assert_string_equal(engine_state_name(e->state), "port_conflict");
	assert_int_equal(e->proc.pid, 0);
	engine_free(e);
	close(fd);
	fixture_free(&f);
}

static void
test_stop_leaves_no_grandchild(void **state)
{
	struct fixture f;
	struct engine *e;
	struct buf b = BUF_INIT;
	char *pidfile = xasprintf("%s/gc.pid", tmpdir);
	char *extra = xasprintf(", \"--ignore-term\", \"--grandchild-pidfile\","
	    " \"%s\"", pidfile);
	pid_t gc, leader;

	fixture_init(&f, extra, "grandchild");
	f.params.stop_grace_ms = 300;
	assert_null(engine_start(&e, &f.params));
	assert_string_equal(engine_state_name(e->state), "ready");
	assert_null(file_read(&b, pidfile));
	gc = (pid_t)atol(b.data);
	assert_true(gc > 0);
	assert_int_equal(kill(gc, 0), 0);
	leader = e->proc.pid;
	assert_null(engine_stop(e));
	assert_int_equal(kill(gc, 0), -1);
	assert_int_equal(errno, ESRCH);
	assert_int_equal(kill(leader, 0), -1);
	assert_false(spawn_group_alive(leader));
	engine_free(e);
	fixture_free(&f);
	buf_free(&b);
	free(pidfile);
	free(extra);
}

/* pre_start runs before the server in its environment and directory,
 * {scratch} is there while it runs, stop runs once after the stop and
 * {scratch} is gone; the steps' output is in the server's log. */
static void
test_steps_around_the_server(void **state)
{
	struct fixture f;
	struct engine *e;
	struct buf log = BUF_INIT;
	char *scratch, *marks = xasprintf("%s/marks", tmpdir), *serve;
	char *real, *want;
	const char *order;

	serve = xasprintf(", \"pre_start\": ["
	    "{\"argv\": [\"sh\", \"-c\", \"echo pre1 $FAKE_ENV >>%s; pwd -P >>%s\"]},"
	    "{\"argv\": [\"sh\", \"-c\", \"test -d {scratch} && "
	    "touch {scratch}/made && echo pre2 >>%s && echo step-out\"]}],"
	    " \"stop\": [{\"argv\": [\"sh\", \"-c\", \"echo stop {split} >>%s\"]}]",
	    marks, marks, marks, marks);
	fixture_init_full(&f, NULL, serve, NULL, "steps");
	assert_null(engine_start(&e, &f.params));
	assert_string_equal(engine_state_name(e->state), "ready");
	scratch = xasprintf("%s/scratch", f.env_dir);
	assert_true(path_exists(scratch));
	assert_null(engine_stop(e));
	assert_false(path_exists(scratch));
	engine_free(e);		/* stops again: the stop steps ran once */
	assert_null(file_read(&log, marks));
	order = log.data;
	assert_non_null(strstr(order, "pre1 ctx=16384 c=8 s=agent\n"));
	assert_non_null(strstr(order, "pre2\nstop agent\n"));
	assert_null(strstr(strstr(order, "stop agent\n") + 1, "stop agent"));
	/* cwd: the repository (no serve.cwd) */
	real = realpath(srcdir, NULL);
	want = xasprintf("\n%s\npre2\n", real);
	assert_non_null(strstr(order, want));
	free(want);
	free(real);
	buf_reset(&log);
	assert_null(file_read(&log, f.log_path));
	assert_non_null(strstr(log.data, "== warden: pre_start step 2 of 2\n"));
	assert_non_null(strstr(log.data, "step-out\n"));
	assert_non_null(strstr(log.data, "== warden: stop step 1: ok\n"));
	/* the server started after the steps */
	assert_true(strstr(log.data, "pre_start step 2: ok") <
	    strstr(log.data, "argv: "));
	buf_free(&log);
	free(scratch);
	free(serve);
	free(marks);
	fixture_free(&f);
}

/* A failing step is setup_failed, naming the step and its status; the
 * server never starts and the stop steps still run. */
static void
test_failing_step_is_setup_failed(void **state)
{
	struct fixture f;
	struct engine *e;
	struct buf b = BUF_INIT;
	char *marks = xasprintf("%s/marks-fail", tmpdir), *serve;

	serve = xasprintf(", \"pre_start\": ["
	    "{\"argv\": [\"sh\", \"-c\", \"echo cannot stop the service; exit 3\"]}],"
	    " \"stop\": [{\"argv\": [\"sh\", \"-c\", \"echo stopped >>%s\"]}]",
	    marks);
	fixture_init_full(&f, NULL, serve, NULL, "stepfail");
	assert_null(engine_start(&e, &f.params));
	assert_string_equal(engine_state_name(e->state), "setup_failed");
	assert_int_equal(e->proc.pid, 0);
	assert_non_null(strstr(e->detail, "pre_start step 1 'sh -c echo "
	    "cannot stop the service; exit 3': exit status 3"));
	assert_non_null(strstr(e->detail, "cannot stop the service\n"));
	engine_free(e);
	assert_null(file_read(&b, marks));
	assert_string_equal(b.data, "stopped\n");
	buf_free(&b);
	free(serve);
	free(marks);
	fixture_free(&f);
}

/* A step that may fail (a program this system lacks) does not keep the
 * server from starting; one that outlives its timeout is stopped, with
 * whatever it started. */
static void
test_step_may_fail_and_times_out(void **state)
{
	struct fixture f;
	struct engine *e;
	struct buf b = BUF_INIT;
	char *pidfile = xasprintf("%s/step.pid", tmpdir), *serve;
	uint64_t t0;
	pid_t bg;

	fixture_init_full(&f, NULL, ", \"pre_start\": ["
	    "{\"argv\": [\"no-such-program-warden\", \"stop\"], \"may_fail\": true},"
	    "{\"argv\": [\"sh\", \"-c\", \"exit 1\"], \"may_fail\": true}]",
	    NULL, "mayfail");
	assert_null(engine_start(&e, &f.params));
	assert_string_equal(engine_state_name(e->state), "ready");
	assert_null(file_read(&b, f.log_path));
	assert_non_null(strstr(b.data, "pre_start step 1 failed (it may): "
	    "'no-such-program-warden stop': exec"));
	engine_free(e);
	fixture_free(&f);

	serve = xasprintf(", \"pre_start\": [{\"argv\": [\"sh\", \"-c\","
	    " \"sleep 30 & echo $! >%s; wait\"], \"timeout_s\": 0.5}]", pidfile);
	fixture_init_full(&f, NULL, serve, NULL, "steptimeout");
	f.params.stop_grace_ms = 200;
	t0 = mono_ns();
	assert_null(engine_start(&e, &f.params));
	/* well before the 30 s a start that waited for the step takes */
	assert_true(mono_ns() - t0 < 25000000000ULL);
	assert_string_equal(engine_state_name(e->state), "setup_failed");
	assert_non_null(strstr(e->detail, "did not end within 0.5 s"));
	buf_reset(&b);
	assert_null(file_read(&b, pidfile));
	bg = (pid_t)atol(b.data);
	assert_true(bg > 0);
	assert_int_equal(kill(bg, 0), -1);
	engine_free(e);
	fixture_free(&f);
	buf_free(&b);
	free(serve);
	free(pidfile);
}

/* A profile's relative weights are found under REPO/.warden/models, an
 * absolute path is kept; {model_repo} is the profile's repo. */
static void
test_weights_under_models_dir(void **state)
{
	struct fixture f;
	struct engine *e;
	char *want;

	fixture_init_full(&f, ", \"--weights\", \"{model_path}\", \"--dir\","
	    " \"{model_dir}\", \"--from\", \"{model_repo}\"", NULL,
	    ", \"repo\": \"org/tiny-GGUF\", \"file\": \"tiny-BF16.gguf\","
	    " \"dir\": \"/abs/tiny\"", "weights");
	assert_null(engine_start(&e, &f.params));
	assert_string_equal(engine_state_name(e->state), "ready");
	want = xasprintf("--weights %s/.warden/models/tiny-BF16.gguf --dir "
	    "/abs/tiny --from org/tiny-GGUF", srcdir);
	assert_non_null(strstr(e->argv_text, want));
	free(want);
	/* what is published names no local path under the bench, no port */
	assert_non_null(strstr(e->argv_provenance, "--weights "
	    "./.warden/models/tiny-BF16.gguf --dir /abs/tiny --from "
	    "org/tiny-GGUF"));
	assert_non_null(strstr(e->argv_provenance, "--port {port}"));
	assert_null(strstr(e->argv_provenance, srcdir));
	engine_free(e);
	fixture_free(&f);
}

static void
test_log_quiet_time_grows_until_output(void **state)
{
	struct fixture f;
	struct engine *e;
	uint64_t now;

	fixture_init(&f, NULL, "quiet");
	assert_null(engine_start(&e, &f.params));
	now = mono_ns();
	(void)engine_log_quiet_ns(e, now);
	assert_int_equal(engine_log_quiet_ns(e, now + 5000000000ULL),
	    5000000000ULL);
	assert_null(file_append(e->log_path, "x\n", 2));
	assert_int_equal(engine_log_quiet_ns(e, now + 6000000000ULL), 0);
	engine_free(e);
	fixture_free(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expand_templates),
		cmocka_unit_test(test_every_known_placeholder_expands),
		cmocka_unit_test(test_ready_engine_serves_profile_model),
		cmocka_unit_test(test_exit_before_ready_is_not_ready),
		cmocka_unit_test(test_missing_program_is_start_failed),
		cmocka_unit_test(test_ready_timeout_is_not_ready),
		cmocka_unit_test(test_wrong_model_is_an_outcome),
		cmocka_unit_test(test_crash_after_ready_is_seen_with_signal),
		cmocka_unit_test(test_taken_port_is_port_conflict),
		cmocka_unit_test(test_stop_leaves_no_grandchild),
		cmocka_unit_test(test_log_quiet_time_grows_until_output),
		cmocka_unit_test(test_steps_around_the_server),
		cmocka_unit_test(test_failing_step_is_setup_failed),
		cmocka_unit_test(test_step_may_fail_and_times_out),
		cmocka_unit_test(test_weights_under_models_dir),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
