/*
 * fault.c - named crash points for crash-consistency tests. See fault.h.
 *
 * Reads the environment once. Must never do anything when neither
 * WARDEN_FAULT nor WARDEN_FAULT_TRACE is set, and never print.
 */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault.h"

static int fault_loaded;
static char fault_name[128];
static long fault_left;		/* passes before the kill; 0: none armed */
static const char *fault_trace;

static void
fault_load(void)
{
	const char *env = getenv("WARDEN_FAULT");
	const char *colon;
	size_t n;

	fault_loaded = 1;
	fault_trace = getenv("WARDEN_FAULT_TRACE");
	if (fault_trace != NULL && fault_trace[0] == '\0')
		fault_trace = NULL;
	if (env == NULL || env[0] == '\0')
		return;
	colon = strchr(env, ':');
	n = colon != NULL ? (size_t)(colon - env) : strlen(env);
	if (n == 0 || n >= sizeof(fault_name))
		return;
	memcpy(fault_name, env, n);
	fault_name[n] = '\0';
	fault_left = colon != NULL ? strtol(colon + 1, NULL, 10) : 1;
	if (fault_left < 1)
		fault_left = 1;
}

/* One line per pass, written with a single write(2) so that lines of
 * processes sharing the file do not interleave. */
static void
fault_trace_pass(const char *name)
{
	char line[160];
	size_t n = strlen(name);
	int fd;

	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	memcpy(line, name, n);
	line[n++] = '\n';
	fd = open(fault_trace, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd == -1)
		return;
	if (write(fd, line, n) < 0) {
		/* a lost trace line only makes the test enumerate less */
	}
	close(fd);
}

void
fault_point(const char *name)
{
	if (!fault_loaded)
		fault_load();
	if (fault_trace != NULL)
		fault_trace_pass(name);
	if (fault_left == 0 || strcmp(name, fault_name) != 0)
		return;
	if (--fault_left == 0)
		raise(SIGKILL);
}
