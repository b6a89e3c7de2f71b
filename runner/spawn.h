/*
 * spawn.h - the one way warden starts and stops another program that
 * must not outlive it (engine servers, build commands, shims).
 *
 * A spawned program runs in its own session and process group, with its
 * stdout and stderr appended to a log file. Stopping it signals the whole
 * group (SIGTERM, a grace period, then SIGKILL) and reaps every process of
 * the group, grandchildren included: on Linux warden makes itself the
 * child subreaper so orphaned descendants come back to it to be reaped,
 * and the program gets SIGTERM should warden die without stopping it.
 * A descendant that left the group (a daemon that called setsid) is
 * found and killed by spawn_reap_descendants(). Standard input is always
 * /dev/null: no spawned program reads warden's terminal.
 * This module never prints and never waits without a deadline.
 */
#ifndef WARDEN_SPAWN_H
#define WARDEN_SPAWN_H

#include <sys/types.h>

#include <stdint.h>

#include "buf.h"
#include "error.h"

struct spawn_opts {
	char *const *argv;	/* argv[0] is looked up in PATH */
	char *const *env_add;	/* "NAME=VALUE" set in the child; may be NULL */
	char *const *env;	/* the child's whole environment instead of
				   warden's plus env_add; NULL: not so */
	const char *cwd;	/* NULL: warden's working directory */
	const char *log_path;	/* stdout+stderr appended; NULL: /dev/null */
	const char *stdout_path; /* NULL: stdout goes to log_path too; else
				    stdout alone is written (truncated) here */
};

struct spawn_proc {
	pid_t pid;		/* also the process group id; 0 when not running */
	int exited;		/* the leader has been reaped */
	int status;		/* its wait status, valid when exited */
};

/*
 * Start opts->argv. Fails (WEXIT_ENV) when the program cannot be
 * executed; the exec error is reported, not left to the log.
 */
struct werr *spawn_start(struct spawn_proc *out, const struct spawn_opts *opts);

/* Has the leader exited? Never blocks. 1 exited (p->status set), 0 not. */
int spawn_poll(struct spawn_proc *p);

/*
 * Stop the whole group: SIGTERM, wait up to grace_ms, SIGKILL, then reap
 * until no process of the group is left (bounded; an error if one
 * survives). Safe to call on an exited or never-started proc.
 */
struct werr *spawn_stop(struct spawn_proc *p, unsigned grace_ms);

/*
 * Run opts->argv to its end, for at most timeout_ms; past that its group
 * is stopped as spawn_stop() does (*timed_out set). Whatever the program
 * left running in its group is stopped too, so nothing outlives the
 * call. *status is the program's wait status. Fails as spawn_start().
 */
struct werr *spawn_run(const struct spawn_opts *opts, unsigned timeout_ms,
    unsigned grace_ms, int *status, int *timed_out);

/* Is any process of group pgid still alive (zombies do not count)? */
int spawn_group_alive(pid_t pgid);

/*
 * Kill (SIGKILL) and reap every remaining descendant of this process:
 * what is left after spawn_stop() of programs that escaped their group.
 * Call only when no program this process spawned should still run.
 * *killed counts the processes signalled. Linux only (through /proc and
 * the subreaper); elsewhere it finds nothing.
 */
struct werr *spawn_reap_descendants(unsigned *killed);

/* "exit status 3" or "killed by signal 9 (SIGKILL)". */
void spawn_status_describe(struct buf *out, int status);

#endif
