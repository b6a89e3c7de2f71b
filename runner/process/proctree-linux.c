/*
 * proctree-linux.c - the Linux half of proctree.h: /proc/PID/stat for
 * every process. Compiled only on Linux. Never prints.
 */
#include "config.h"

#ifdef __linux__

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proctree.h"
#include "util.h"

/* Parse /proc/PID/stat: the name is in parentheses and may itself hold
 * ')' and spaces, so the fields are read after the last ')'. */
static int
read_stat(pid_t pid, struct proc_info *pi)
{
	char path[64], data[1024], state, *rp;
	long ppid, pgrp;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	len = read(fd, data, sizeof(data) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	data[len] = '\0';
	if ((rp = strrchr(data, ')')) == NULL ||
	    sscanf(rp + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3)
		return -1;
	pi->pid = pid;
	pi->ppid = (pid_t)ppid;
	pi->pgid = (pid_t)pgrp;
	pi->zombie = state == 'Z' || state == 'X';
	return 0;
}

struct werr *
proctree_list(struct proc_info **out, size_t *n)
{
	struct proc_info *v = NULL;
	size_t len = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	*out = NULL;
	*n = 0;
	if ((d = opendir("/proc")) == NULL)
		return werr_errno("opendir", "/proc");
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (len == cap) {
			cap = cap ? cap * 2 : 256;
			v = xrealloc(v, cap * sizeof(*v));
		}
		/* A process gone between readdir and open is simply absent. */
		if (read_stat((pid_t)atol(de->d_name), &v[len]) == 0)
			len++;
	}
	closedir(d);
	*out = v;
	*n = len;
	return NULL;
}

struct werr *
proctree_port_listeners(pid_t **out, size_t *n, int port)
{
	(void)port;
	*out = NULL;
	*n = 0;
	return NULL;
}

#else
typedef int proctree_linux_unused;
#endif
