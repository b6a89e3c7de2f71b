/*
 * spawn.c - start a program in its own process group with its output in a
 * log file; stop it and every process of its group. See spawn.h.
 *
 * Between fork and exec the child only calls async-signal-safe functions.
 * An exec failure travels back over a close-on-exec pipe, so spawn_start()
 * reports it instead of leaving a dead child behind. Never blocks without
 * a deadline, never prints.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proctree.h"
#include "spawn.h"
#include "util.h"

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static int
cloexec_pipe(int fds[2])
{
#ifdef HAVE_PIPE2
	return pipe2(fds, O_CLOEXEC);
#else
	if (pipe(fds) == -1)
		return -1;
	(void)fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	(void)fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	return 0;
#endif
}

/* Orphaned descendants of an engine come back to warden to be reaped. */
static void
become_subreaper(void)
{
#if defined(__linux__) && defined(PR_SET_CHILD_SUBREAPER)
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif
}

/* In the child: report errno on the pipe and exit. */
static void
child_fail(int fd)
{
	int e = errno;
	ssize_t r;

	r = write(fd, &e, sizeof(e));
	(void)r;
	_exit(127);
}

/*
 * In the child: every descriptor above stderr closes at exec, whoever
 * opened it (the store, libcurl's sockets, a library that forgot
 * O_CLOEXEC). A spawned program, sandboxed or not, inherits stdin,
 * stdout and stderr and nothing else. The error pipe still works until
 * the exec. Async-signal-safe.
 */
static void
cloexec_above_stderr(void)
{
	struct rlimit rl;
	int fd, max = 1024;

#if defined(__linux__) && defined(SYS_close_range)
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return;
#endif
	/* Older kernels and macOS: one call a possible descriptor. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		max = rl.rlim_cur > 1048576 ? 1048576 : (int)rl.rlim_cur;
	for (fd = 3; fd < max; fd++)
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
}

extern char **environ;

/* The child's environment, built before fork: environ plus opts->env_add. */
static char **
env_build(char *const *add)
{
	size_t n = 0, nadd = 0, i, j, k = 0;
	char **env;

	while (environ[n] != NULL)
		n++;
	while (add != NULL && add[nadd] != NULL)
		nadd++;
	env = xcalloc(n + nadd + 1, sizeof(*env));
	for (i = 0; i < n; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t len = eq ? (size_t)(eq - environ[i]) + 1 : 0;
		int replaced = 0;

		for (j = 0; len != 0 && j < nadd; j++)
			if (strncmp(add[j], environ[i], len) == 0)
				replaced = 1;
		if (!replaced)
			env[k++] = environ[i];
	}
	for (j = 0; j < nadd; j++)
		env[k++] = add[j];
	env[k] = NULL;
	return env;
}

static void
child_exec(const struct spawn_opts *opts, char **env, int logfd, int outfd,
    int nullfd,
    int errfd, pid_t parent)
{
#if defined(__linux__) && defined(PR_SET_PDEATHSIG)
	/* If warden dies (even by kill -9), the engine hears SIGTERM. */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) == -1)
		child_fail(errfd);
	if (getppid() != parent)
		_exit(127);
#endif
	if (setsid() == -1)
		child_fail(errfd);
	if (nullfd != STDIN_FILENO && dup2(nullfd, STDIN_FILENO) == -1)
		child_fail(errfd);
	if (dup2(outfd != -1 ? outfd : logfd, STDOUT_FILENO) == -1 ||
	    dup2(logfd, STDERR_FILENO) == -1)
		child_fail(errfd);
	if (logfd > STDERR_FILENO)
		close(logfd);
	if (outfd > STDERR_FILENO)
		close(outfd);
	if (opts->cwd != NULL && chdir(opts->cwd) == -1)
		child_fail(errfd);
	if (opts->file_size_max > 0) {
		struct rlimit fsz = { (rlim_t)opts->file_size_max,
		    (rlim_t)opts->file_size_max };

		if (setrlimit(RLIMIT_FSIZE, &fsz) == -1)
			child_fail(errfd);
		/* a write past it fails (EFBIG) instead of killing */
		signal(SIGXFSZ, SIG_IGN);
	}
	cloexec_above_stderr();
	environ = env;
	signal(SIGPIPE, SIG_DFL);
	execvp(opts->argv[0], opts->argv);
	child_fail(errfd);
}

/* ---- the programs running, so that stopping one spares the others ---- */

#define SPAWN_MAX_LIVE 64

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t live[SPAWN_MAX_LIVE];
static size_t nlive;

static void
live_add(pid_t pid)
{
	pthread_mutex_lock(&live_lock);
	if (nlive < SPAWN_MAX_LIVE)
		live[nlive++] = pid;
	pthread_mutex_unlock(&live_lock);
}

static void
live_remove(pid_t pid)
{
	size_t i;

	pthread_mutex_lock(&live_lock);
	for (i = 0; i < nlive; i++)
		if (live[i] == pid) {
			live[i] = live[--nlive];
			break;
		}
	pthread_mutex_unlock(&live_lock);
}

struct werr *
spawn_start(struct spawn_proc *out, const struct spawn_opts *opts)
{
	int errpipe[2], logfd, nullfd, outfd = -1, childerr = 0;
	char **env;
	ssize_t n;
	pid_t pid, self = getpid();

	memset(out, 0, sizeof(*out));
	if (opts->argv == NULL || opts->argv[0] == NULL)
		return werr_new(WEXIT_INPUT, "spawn: empty command");
	if (opts->log_fd > STDERR_FILENO)
		logfd = fcntl(opts->log_fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	else if (opts->log_path != NULL)
		logfd = open(opts->log_path, O_WRONLY | O_CREAT | O_APPEND |
		    O_CLOEXEC | O_NOFOLLOW, 0644);
	else
		logfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (logfd == -1)
		return werr_errno(opts->log_fd > STDERR_FILENO ? "dup" : "open",
		    opts->log_fd > STDERR_FILENO ? "the log's descriptor" :
		    opts->log_path ? opts->log_path : "/dev/null");
	if (opts->stdout_path != NULL && (outfd = open(opts->stdout_path,
	    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644))
	    == -1) {
		close(logfd);
		return werr_errno("open", opts->stdout_path);
	}
	if ((nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1) {
		close(logfd);
		if (outfd != -1)
			close(outfd);
		return werr_errno("open", "/dev/null");
	}
	if (cloexec_pipe(errpipe) == -1) {
		close(logfd);
		close(nullfd);
		if (outfd != -1)
			close(outfd);
		return werr_errno("pipe", NULL);
	}
	become_subreaper();
	env = opts->env != NULL ? NULL : env_build(opts->env_add);
	pid = fork();
	if (pid == -1) {
		free(env);
		close(logfd);
		close(nullfd);
		if (outfd != -1)
			close(outfd);
		close(errpipe[0]);
		close(errpipe[1]);
		return werr_errno("fork", NULL);
	}
	if (pid == 0) {
		close(errpipe[0]);
		child_exec(opts, env != NULL ? env : (char **)opts->env, logfd,
		    outfd, nullfd, errpipe[1], self);
	}
	free(env);
	/* The pipe closes at exec, after setsid: the group exists now. */
	close(logfd);
	close(nullfd);
	if (outfd != -1)
		close(outfd);
	close(errpipe[1]);
	do
		n = read(errpipe[0], &childerr, sizeof(childerr));
	while (n == -1 && errno == EINTR);
	close(errpipe[0]);
	out->pid = pid;
	if (n == (ssize_t)sizeof(childerr)) {
		(void)waitpid(pid, &out->status, 0);
		out->exited = 1;
		errno = childerr;
		return werr_errno("exec", opts->argv[0]);
	}
	live_add(pid);
	return NULL;
}

int
spawn_poll(struct spawn_proc *p)
{
	pid_t r;

	if (p->pid == 0 || p->exited)
		return 1;
	do
		r = waitpid(p->pid, &p->status, WNOHANG);
	while (r == -1 && errno == EINTR);
	if (r == p->pid || (r == -1 && errno == ECHILD)) {
		p->exited = 1;
		return 1;
	}
	return 0;
}

int
spawn_group_alive(pid_t pgid)
{
	if (pgid <= 0)
		return 0;
	if (kill(-pgid, 0) == 0)
		return 1;
	return errno == EPERM;
}

/* Reap whatever of the group has died; the leader's status is kept. */
static void
reap_group(struct spawn_proc *p)
{
	int status;
	pid_t r;

	for (;;) {
		r = waitpid(-p->pid, &status, WNOHANG);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (r == p->pid && !p->exited) {
			p->exited = 1;
			p->status = status;
		}
	}
	(void)spawn_poll(p);
}

/*
 * The processes of p now (proctree_program): its group, every descendant
 * of its leader, every orphan that came back to warden as subreaper and
 * belongs to no other running program, and on macOS who listens on its
 * port. *n is 0 where the platform cannot list processes (the group is
 * still signalled).
 */
static void
program_members(const struct spawn_proc *p, struct proc_info **v, size_t *n)
{
	pid_t others[SPAWN_MAX_LIVE];
	size_t nothers = 0, i;

	pthread_mutex_lock(&live_lock);
	for (i = 0; i < nlive; i++)
		if (live[i] != p->pid)
			others[nothers++] = live[i];
	pthread_mutex_unlock(&live_lock);
	werr_free(proctree_program(v, n, p->pid, others, nothers, p->port));
}

/* Signal p's group, leader and every member; reap the members that are
 * warden's children and have died. The count of live members. */
static size_t
program_signal(struct spawn_proc *p, int sig)
{
	struct proc_info *v = NULL;
	pid_t self = getpid();
	size_t n = 0, i, alive = 0;
	int status;

	program_members(p, &v, &n);
	if (sig != 0) {
		(void)kill(-p->pid, sig);
		if (!p->exited)
			(void)kill(p->pid, sig);
	}
	for (i = 0; i < n; i++) {
		if (v[i].pid == p->pid)
			continue;	/* the leader: reap_group keeps its status */
		if (v[i].zombie) {
			if (v[i].ppid == self)
				(void)waitpid(v[i].pid, &status, WNOHANG);
			continue;
		}
		alive++;
		if (sig != 0)
			(void)kill(v[i].pid, sig);
	}
	free(v);
	return alive;
}

/* Wait up to ms for p to be gone: its leader reaped, its group empty, no
 * member alive. sig is sent again each round to members that appeared
 * meanwhile (0: none). 1 gone, 0 not. */
static int
wait_program_gone(struct spawn_proc *p, unsigned ms, int sig)
{
	uint64_t start = mono_ns(), deadline = start + (uint64_t)ms * 1000000ULL;
	size_t alive;

	for (;;) {
		reap_group(p);
		alive = program_signal(p, sig);
		if (p->exited && !spawn_group_alive(p->pid) && alive == 0)
			return 1;
		if (mono_ns() >= deadline)
			return 0;
		/* Every round lists the processes: look often at first,
		 * when most programs are already gone, then less. */
		sleep_ms(mono_ns() - start < 200000000ULL ? 5 : 50);
	}
}

struct werr *
spawn_stop(struct spawn_proc *p, unsigned grace_ms)
{
	struct werr *err = NULL;

	if (p->pid == 0)
		return NULL;
	reap_group(p);
	if (p->exited && !spawn_group_alive(p->pid) &&
	    program_signal(p, 0) == 0)
		goto out;
	(void)program_signal(p, SIGTERM);
	if (wait_program_gone(p, grace_ms, 0))
		goto out;
	if (wait_program_gone(p, 5000, SIGKILL))
		goto out;
	err = werr_new(WEXIT_ENV, "processes of program %ld survived SIGKILL",
	    (long)p->pid);
out:
	live_remove(p->pid);
	return err;
}

#ifdef __linux__
/* Signal every descendant of self once; the count signalled. */
static unsigned
kill_descendants_once(pid_t self)
{
	struct proc_info *v = NULL;
	unsigned killed = 0;
	struct werr *err;
	size_t n = 0, i;
	char *mark;


	if ((err = proctree_list(&v, &n)) != NULL) {
		werr_free(err);
		return 0;
	}
	mark = xcalloc(n + 1, 1);
	for (i = 0; i < n; i++)
		mark[i] = v[i].ppid == self && v[i].pid != self;
	proctree_mark_descendants(v, n, mark);
	for (i = 0; i < n; i++)
		if (mark[i] && !v[i].zombie && kill(v[i].pid, SIGKILL) == 0)
			killed++;
	free(mark);
	free(v);
	return killed;
}
#endif

struct werr *
spawn_reap_descendants(unsigned *killed)
{
	*killed = 0;
#ifdef __linux__
	{
		uint64_t deadline = mono_ns() + 5000000000ULL;
		pid_t self = getpid();
		unsigned k;
		int status;

		for (;;) {
			k = kill_descendants_once(self);
			*killed += k;
			/* Reap what died: orphans were re-parented to us. */
			while (waitpid(-1, &status, WNOHANG) > 0)
				;
			if (k == 0)
				break;
			if (mono_ns() >= deadline)
				return werr_new(WEXIT_ENV, "descendants of "
				    "warden survived SIGKILL");
			sleep_ms(5);
		}
	}
#endif
	return NULL;
}

static void (*wait_hook)(void);

void
spawn_set_wait_hook(void (*fn)(void))
{
	wait_hook = fn;
}

struct werr *
spawn_run(const struct spawn_opts *opts, unsigned timeout_ms,
    unsigned grace_ms, int *status, int *timed_out)
{
	uint64_t deadline = mono_ns() + (uint64_t)timeout_ms * 1000000ULL;
	struct spawn_proc p;
	struct werr *err;
	unsigned nap = 1;

	*status = 0;
	*timed_out = 0;
	if ((err = spawn_start(&p, opts)) != NULL) {
		*status = p.status;
		return err;
	}
	while (!spawn_poll(&p)) {
		if (mono_ns() >= deadline) {
			*timed_out = 1;
			break;
		}
		sleep_ms(nap);
		if (nap < 50)
			nap *= 2;
		if (wait_hook != NULL)
			wait_hook();
	}
	err = spawn_stop(&p, grace_ms);
	*status = p.status;
	return err;
}

static const char *
signal_name(int sig)
{
	static const struct {
		int sig;
		const char *name;
	} names[] = {
		{ SIGHUP, "SIGHUP" }, { SIGINT, "SIGINT" },
		{ SIGQUIT, "SIGQUIT" }, { SIGILL, "SIGILL" },
		{ SIGABRT, "SIGABRT" }, { SIGFPE, "SIGFPE" },
		{ SIGKILL, "SIGKILL" }, { SIGBUS, "SIGBUS" },
		{ SIGSEGV, "SIGSEGV" }, { SIGPIPE, "SIGPIPE" },
		{ SIGALRM, "SIGALRM" }, { SIGTERM, "SIGTERM" },
		{ SIGUSR1, "SIGUSR1" }, { SIGUSR2, "SIGUSR2" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].sig == sig)
			return names[i].name;
	return "unknown signal";
}

void
spawn_status_describe(struct buf *out, int status)
{
	if (WIFEXITED(status)) {
		buf_printf(out, "exit status %d", WEXITSTATUS(status));
	} else if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		buf_printf(out, "killed by signal %d (%s)", sig,
		    signal_name(sig));
	} else {
		buf_printf(out, "wait status %#x", status);
	}
}
