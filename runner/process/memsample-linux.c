/*
 * memsample-linux.c - the Linux half of memsample.h, read from /proc:
 * /proc/meminfo for the system, /proc/PID/stat for every process of an
 * engine's tree (its process group plus the descendants of its leader).
 * Compiled everywhere, empty except on Linux. Never prints.
 */
#include "config.h"

#ifdef __linux__

#include <sys/types.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "memsample.h"
#include "util.h"

static uint64_t
meminfo_field(const char *text, const char *name)
{
	const char *p = text;
	size_t len = strlen(name);

	while ((p = strstr(p, name)) != NULL) {
		if ((p == text || p[-1] == '\n') && p[len] == ':')
			return strtoull(p + len + 1, NULL, 10) * 1024ULL;
		p += len;
	}
	return 0;
}

struct werr *
memsample_system(uint64_t *used, uint64_t *total)
{
	struct buf b = BUF_INIT;
	struct werr *err;
	uint64_t t, avail;

	if ((err = file_read(&b, "/proc/meminfo")) != NULL)
		return err;
	t = meminfo_field(buf_cstr(&b), "MemTotal");
	avail = meminfo_field(buf_cstr(&b), "MemAvailable");
	buf_free(&b);
	if (t == 0)
		return werr_new(WEXIT_ENV, "/proc/meminfo: no MemTotal");
	*total = t;
	*used = avail < t ? t - avail : 0;
	return NULL;
}

struct proc_row {
	pid_t pid, ppid, pgrp;
	uint64_t rss_pages;
	int in_tree;
};

/* Parse /proc/PID/stat; the command name may hold spaces and ')'. */
static int
read_stat(pid_t pid, struct proc_row *row)
{
	char path[64], line[1024], state;
	const char *p;
	long ppid, pgrp, rss;
	FILE *f;
	size_t n;
	int i;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	n = fread(line, 1, sizeof(line) - 1, f);
	fclose(f);
	line[n] = '\0';
	if ((p = strrchr(line, ')')) == NULL)
		return -1;
	if (sscanf(p + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3)
		return -1;
	/* Skip to field 24 (rss): the space before field 3 is the first
	 * after the name, so 22 spaces lead to field 24. */
	for (i = 0; i < 22 && p != NULL; i++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p, " %ld", &rss) != 1)
		return -1;
	if (state == 'Z' || state == 'X')
		rss = 0;
	row->pid = pid;
	row->ppid = (pid_t)ppid;
	row->pgrp = (pid_t)pgrp;
	row->rss_pages = rss > 0 ? (uint64_t)rss : 0;
	row->in_tree = 0;
	return 0;
}

static struct werr *
list_processes(struct proc_row **out, size_t *n)
{
	struct proc_row *rows = NULL;
	size_t cap = 0, len = 0;
	struct dirent *de;
	DIR *d;

	if ((d = opendir("/proc")) == NULL)
		return werr_errno("opendir", "/proc");
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (len == cap) {
			cap = cap ? cap * 2 : 256;
			rows = xrealloc(rows, cap * sizeof(*rows));
		}
		if (read_stat((pid_t)atol(de->d_name), &rows[len]) == 0)
			len++;
	}
	closedir(d);
	*out = rows;
	*n = len;
	return NULL;
}

/* Mark the group of root and every descendant of root (not warden's). */
static void
mark_tree(struct proc_row *rows, size_t n, pid_t root)
{
	pid_t self = getpid();
	int changed = 1;
	size_t i, j;

	for (i = 0; i < n; i++)
		rows[i].in_tree = rows[i].pid == root || rows[i].pgrp == root;
	while (changed) {
		changed = 0;
		for (i = 0; i < n; i++) {
			if (rows[i].in_tree)
				continue;
			for (j = 0; j < n; j++) {
				if (rows[j].in_tree &&
				    rows[j].pid == rows[i].ppid &&
				    rows[j].pid != self) {
					rows[i].in_tree = 1;
					changed = 1;
					break;
				}
			}
		}
	}
}

struct werr *
memsample_tree(pid_t root, uint64_t *bytes, unsigned *nprocs)
{
	struct proc_row *rows = NULL;
	struct werr *err;
	size_t n = 0, i;
	uint64_t pages = 0;
	unsigned count = 0;

	*bytes = 0;
	*nprocs = 0;
	if (root <= 0)
		return NULL;
	if ((err = list_processes(&rows, &n)) != NULL)
		return err;
	mark_tree(rows, n, root);
	for (i = 0; i < n; i++) {
		if (!rows[i].in_tree)
			continue;
		pages += rows[i].rss_pages;
		count++;
	}
	free(rows);
	*bytes = pages * (uint64_t)sysconf(_SC_PAGESIZE);
	*nprocs = count;
	return NULL;
}

/* Add the inodes of sockets listening on port from a /proc/net table. */
static void
listen_inodes(const char *table, int port, unsigned long **inodes, size_t *n)
{
	char line[512];
	unsigned local_port, state;
	unsigned long inode;
	FILE *f;

	if ((f = fopen(table, "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		/* sl local_address rem_address st tx:rx tr:tm retr uid
		 * timeout inode */
		if (sscanf(line, " %*u: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x "
		    "%*x:%*x %*x:%*x %*x %*u %*u %lu", &local_port, &state,
		    &inode) != 3)
			continue;
		if ((int)local_port != port || state != 0x0A || inode == 0)
			continue;
		*inodes = xrealloc(*inodes, (*n + 1) * sizeof(**inodes));
		(*inodes)[(*n)++] = inode;
	}
	fclose(f);
}

static int
pid_holds_inode(pid_t pid, const unsigned long *inodes, size_t n)
{
	char dir[64], link[PATH_MAX], want[64];
	struct dirent *de;
	DIR *d;
	ssize_t len;
	size_t i;
	int found = 0;

	snprintf(dir, sizeof(dir), "/proc/%ld/fd", (long)pid);
	if ((d = opendir(dir)) == NULL)
		return 0;
	while (!found && (de = readdir(d)) != NULL) {
		char *path;

		if (de->d_name[0] == '.')
			continue;
		path = xasprintf("%s/%s", dir, de->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		free(path);
		if (len <= 0)
			continue;
		link[len] = '\0';
		for (i = 0; i < n && !found; i++) {
			snprintf(want, sizeof(want), "socket:[%lu]", inodes[i]);
			found = strcmp(link, want) == 0;
		}
	}
	closedir(d);
	return found;
}

int
memsample_tree_listens(pid_t root, int port)
{
	unsigned long *inodes = NULL;
	struct proc_row *rows = NULL;
	size_t ninodes = 0, n = 0, i;
	struct werr *err;
	int found = 0;

	listen_inodes("/proc/net/tcp", port, &inodes, &ninodes);
	listen_inodes("/proc/net/tcp6", port, &inodes, &ninodes);
	if (ninodes == 0)
		return 0;
	if ((err = list_processes(&rows, &n)) != NULL) {
		werr_free(err);
		free(inodes);
		return -1;
	}
	mark_tree(rows, n, root);
	for (i = 0; i < n && !found; i++)
		if (rows[i].in_tree)
			found = pid_holds_inode(rows[i].pid, inodes, ninodes);
	free(rows);
	free(inodes);
	return found;
}

struct werr *
memsample_procs_logging_under(const char *dir, pid_t **pids, size_t *n)
{
	char link[PATH_MAX], *path;
	struct dirent *de;
	size_t dlen = strlen(dir);
	ssize_t len;
	DIR *d;

	*pids = NULL;
	*n = 0;
	if ((d = opendir("/proc")) == NULL)
		return werr_errno("opendir", "/proc");
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		path = xasprintf("/proc/%s/fd/1", de->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		free(path);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if ((size_t)len <= dlen || strncmp(link, dir, dlen) != 0 ||
		    link[dlen] != '/')
			continue;
		*pids = xrealloc(*pids, (*n + 1) * sizeof(**pids));
		(*pids)[(*n)++] = (pid_t)atol(de->d_name);
	}
	closedir(d);
	return NULL;
}

uint64_t
memsample_gpu_hint(void)
{
	return 0;
}

#else
typedef int memsample_linux_unused;
#endif
