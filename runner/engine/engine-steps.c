/*
 * engine-steps.c - the adapter's steps around a server: serve.pre_start
 * before each start (stop a system service, lay out a model directory)
 * and serve.stop after each stop, and the {scratch} directory made for
 * each start. Each step runs through spawn.h with a timeout, in the
 * server's directory, environment and sandbox (if it has one), its
 * output appended to the server's log (through the descriptor warden
 * holds, never reopened by name) between marker lines. See
 * engine-private.h.
 *
 * A step never outlives its call (spawn_run stops its whole group), and
 * nothing here prints.
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "engine-private.h"
#include "sandbox/scratch.h"
#include "util.h"

/* A line of warden's own in the server's log, so a reader sees the
 * steps' output for what it is. */
static void
log_mark(const struct engine *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
log_mark(const struct engine *e, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	struct werr *err;
	va_list ap;

	buf_puts(&b, "== warden: ");
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	buf_addch(&b, '\n');
	if ((err = file_write_fd(e->log_fd, b.data, b.len, e->log_path))
	    != NULL)
		werr_free(err);
	buf_free(&b);
}

/* Run one step; 0 when it exited 0, else -1 with what happened in why. */
static int
step_run(const struct engine *e, const struct launch *l,
    const struct launch_step *st, struct buf *why)
{
	struct spawn_opts so;
	struct werr *err;
	char *text = engine_join_argv(st->argv), **full;
	int status = 0, timed_out = 0, rc = 0;

	memset(&so, 0, sizeof(so));
	engine_spawn_opts(&so, &full, l, st->argv);
	so.log_fd = e->log_fd;
	buf_printf(why, "'%s': ", text);
	err = spawn_run(&so, (unsigned)(st->timeout_s * 1000),
	    e->stop_grace_ms, &status, &timed_out);
	free(full);
	if (err != NULL) {
		buf_puts(why, err->msg);
		werr_free(err);
		rc = -1;
	} else if (timed_out) {
		buf_printf(why, "did not end within %g s", st->timeout_s);
		rc = -1;
	} else if (status != 0) {
		spawn_status_describe(why, status);
		rc = -1;
	}
	free(text);
	return rc;
}

/* Run steps in order; a failure that may not fail ends the run (-1)
 * unless keep_going, which runs the rest all the same. */
static int
steps_run(const struct engine *e, const struct launch *l,
    const struct launch_step *steps, size_t n, const char *what,
    int keep_going, struct buf *why)
{
	struct buf one = BUF_INIT;
	size_t i;
	int rc = 0;

	for (i = 0; i < n && (rc == 0 || keep_going); i++) {
		buf_reset(&one);
		log_mark(e, "%s step %zu of %zu", what, i + 1, n);
		if (step_run(e, l, &steps[i], &one) == 0) {
			log_mark(e, "%s step %zu: ok", what, i + 1);
			continue;
		}
		log_mark(e, "%s step %zu failed%s: %s", what, i + 1,
		    steps[i].may_fail ? " (it may)" : "", buf_cstr(&one));
		if (!steps[i].may_fail && rc == 0) {
			buf_printf(why, "%s step %zu %s", what, i + 1,
			    buf_cstr(&one));
			rc = -1;
		}
	}
	buf_free(&one);
	return rc;
}

int
engine_steps_pre_start(const struct engine *e, const struct launch *l,
    struct buf *why)
{
	return steps_run(e, l, l->pre_start, l->n_pre_start, "pre_start", 0,
	    why);
}

void
engine_steps_stop(const struct engine *e, const struct launch *l)
{
	struct buf why = BUF_INIT;

	(void)steps_run(e, l, l->stop, l->n_stop, "stop", 1, &why);
	buf_free(&why);
}

struct werr *
engine_scratch_reset(const struct launch *l)
{
	struct werr *err;

	if ((err = scratch_discard(l->scratch)) != NULL)
		return err;
	return mkdir_p(l->scratch);
}

void
engine_scratch_remove(const struct launch *l)
{
	werr_free(scratch_discard(l->scratch));
}
