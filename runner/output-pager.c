/*
 * output-pager.c - long output through a pager, git's way. See output.h.
 *
 * Not spawn.h's job: a spawned program gets its own session and
 * /dev/null for input, and a pager needs the opposite, warden's terminal
 * and process group (it reads keys and is stopped with warden). So this
 * file forks it itself, as git's pager.c does: the pager reads a pipe
 * that becomes warden's stdout (and stderr, when that is the terminal),
 * and warden waits for it before it exits, also when a signal ends it,
 * so the shell's prompt never comes back under a pager still running.
 * A program that cannot be executed is reported on a close-on-exec pipe
 * before anything is written: then there is no pager and the output goes
 * to the terminal as it would without one.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"

static pid_t pager_pid;
static int saved_stderr = -1;	/* stderr before the pager took it */

static const int pager_signals[] = { SIGINT, SIGHUP, SIGTERM, SIGQUIT,
    SIGPIPE };

/* Wait for the pager, then die of sig. Async-signal-safe. */
static void
pager_on_signal(int sig)
{
	close(STDOUT_FILENO);
	close(STDERR_FILENO);
	if (pager_pid > 0)
		(void)waitpid(pager_pid, NULL, 0);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The pager's program: $WARDEN_PAGER, $PAGER, "less"; NULL: none. */
static const char *
pager_program(void)
{
	const char *cmd = getenv("WARDEN_PAGER");

	if (cmd == NULL)
		cmd = getenv("PAGER");
	if (cmd == NULL)
		cmd = "less";
	if (cmd[0] == '\0' || strcmp(cmd, "cat") == 0)
		return NULL;
	return cmd;
}

/* In the child: become the pager, or report errno on fd and exit. */
static void
pager_exec(const char *cmd, int in, int fd)
{
	int e;
	ssize_t r;

	if (dup2(in, STDIN_FILENO) < 0)
		goto fail;
	close(in);
	if (getenv("LESS") == NULL)
		setenv("LESS", "FRX", 1);
	if (getenv("LV") == NULL)
		setenv("LV", "-c", 1);
	/* A plain name runs as is, so a missing one is seen here; anything
	 * with a blank or a shell character is the shell's to read. */
	if (strpbrk(cmd, "|&;<>()$`\\\"' \t\n*?[#~=%") == NULL)
		execlp(cmd, cmd, (char *)NULL);
	else
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
fail:
	e = errno;
	r = write(fd, &e, sizeof(e));
	(void)r;
	_exit(127);
}

void
output_pager_start(void)
{
	const char *cmd;
	int data[2], report[2], e;
	ssize_t n;
	size_t i;
	pid_t pid;

	if (pager_pid > 0 || !isatty(STDOUT_FILENO) ||
	    (cmd = pager_program()) == NULL)
		return;
	fflush(stdout);
	fflush(stderr);
	if (pipe(data) < 0)
		return;
	if (pipe(report) < 0) {
		close(data[0]);
		close(data[1]);
		return;
	}
	(void)fcntl(data[1], F_SETFD, FD_CLOEXEC);
	(void)fcntl(report[0], F_SETFD, FD_CLOEXEC);
	(void)fcntl(report[1], F_SETFD, FD_CLOEXEC);
	if ((pid = fork()) < 0) {
		close(data[0]);
		close(data[1]);
		close(report[0]);
		close(report[1]);
		return;
	}
	if (pid == 0) {
		close(report[0]);
		pager_exec(cmd, data[0], report[1]);
	}
	close(data[0]);
	close(report[1]);
	do
		n = read(report[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(report[0]);
	if (n != 0) {		/* not executed: no pager */
		(void)waitpid(pid, NULL, 0);
		close(data[1]);
		return;
	}
	pager_pid = pid;
	(void)dup2(data[1], STDOUT_FILENO);
	if (isatty(STDERR_FILENO)) {
		saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC,
		    STDERR_FILENO + 1);
		(void)dup2(data[1], STDERR_FILENO);
	}
	close(data[1]);
	for (i = 0; i < sizeof(pager_signals) / sizeof(pager_signals[0]); i++)
		signal(pager_signals[i], pager_on_signal);
}

void
output_pager_end(void)
{
	int null;
	size_t i;

	if (pager_pid <= 0)
		return;
	fflush(stdout);
	fflush(stderr);
	/* The pager sees the end of its input; warden's own descriptors
	 * stay valid (on /dev/null and the old stderr) for what follows. */
	if ((null = open("/dev/null", O_WRONLY)) >= 0) {
		(void)dup2(null, STDOUT_FILENO);
		close(null);
	}
	if (saved_stderr >= 0) {
		(void)dup2(saved_stderr, STDERR_FILENO);
		close(saved_stderr);
		saved_stderr = -1;
	}
	/* Interrupted now, the pager (in the same process group) takes the
	 * signal itself; warden only waits for it. */
	for (i = 0; i < sizeof(pager_signals) / sizeof(pager_signals[0]); i++)
		signal(pager_signals[i], SIG_IGN);
	while (waitpid(pager_pid, NULL, 0) < 0 && errno == EINTR)
		;
	pager_pid = 0;
	for (i = 0; i < sizeof(pager_signals) / sizeof(pager_signals[0]); i++)
		signal(pager_signals[i], SIG_DFL);
}
