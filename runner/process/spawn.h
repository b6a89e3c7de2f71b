/*
 * spawn.h - the one way warden starts and stops another program that
 * must not outlive it (engine servers, build commands, shims).
 *
 * A spawned program runs in its own session and process group, with its
 * stdout and stderr appended to a log file. Stopping it signals every
 * process it started (SIGTERM, a grace period, then SIGKILL) and reaps
 * them: its group, its descendants, and a descendant that left the group
 * (a server that called setsid): on Linux warden makes itself the child
 * subreaper, so such a process stays in warden's tree and is found there
 * (proctree.h); on macOS it is found by the port it serves on. The
 * program gets SIGTERM should warden die without stopping it.
 * spawn_reap_descendants() stops whatever is left of every program at
 * once, for callers that know none should still run. Standard input is always
 * /dev/null: no spawned program reads warden's terminal. A spawned program
 * inherits standard input, output and error and no other descriptor.
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
	const char *log_path;	/* stdout+stderr appended; NULL: /dev/null.
				   Opened without following a symbolic
				   link: a link there is an error */
	int log_fd;		/* > 2: stdout+stderr go to this descriptor
				   of the caller's instead of log_path (a
				   log warden holds open, never reopened
				   by name); 0: log_path */
	const char *stdout_path; /* NULL: stdout goes to the log too; else
				    stdout alone is written (truncated) here */
	uint64_t file_size_max;	/* > 0: no file the program and its
				   children write grows past this many
				   bytes (RLIMIT_FSIZE; the write fails
				   with EFBIG): what a program no
				   maintainer approved may leave */
};

struct spawn_proc {
	pid_t pid;		/* also the process group id; 0 when not running */
	int exited;		/* the leader has been reaped */
	int status;		/* its wait status, valid when exited */
	int port;		/* a TCP port the program serves on, or 0: on
				   macOS whoever of this user listens there
				   when it stops is taken as one of its
				   processes (an orphan left to launchd) */
};

/*
 * Start opts->argv. Fails (WEXIT_ENV) when the program cannot be
 * executed; the exec error is reported, not left to the log.
 */
struct werr *spawn_start(struct spawn_proc *out, const struct spawn_opts *opts);

/* Has the leader exited? Never blocks. 1 exited (p->status set), 0 not. */
int spawn_poll(struct spawn_proc *p);

/*
 * Stop the program and every process it started: SIGTERM, wait up to
 * grace_ms, SIGKILL, then reap until none is left (bounded; an error if
 * one survives). Its processes are its group, every descendant of its
 * leader, and, because warden is their subreaper, every orphan that came
 * back to warden and belongs to no other program still running (a server
 * that called setsid() and whose parent died); on macOS, where orphans go
 * to launchd, also whoever listens on p->port. So a daemon that left the
 * group never outlives its program. Safe to call on an exited or
 * never-started proc.
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

/*
 * A function spawn_run() calls while it waits for its program, about
 * every 50 ms (the progress of a long build or install: it must be
 * cheap, and must not spawn). One per process; NULL: none.
 */
void spawn_set_wait_hook(void (*fn)(void));

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
