/*
 * util.c - files, directories, clocks and text. See util.h (allocation
 * is alloc.c's).
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/time.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "util.h"

char *
xasprintf(const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	return buf_detach(&b);
}

static const char *
file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "a file of another kind";
}

struct werr *
file_open_regular(int *fd_out, const char *path, off_t *size_out)
{
	struct stat st;
	int fd, flags;

	*fd_out = -1;
	/* O_NONBLOCK: opening a FIFO with no writer must not wait. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd == -1)
		return werr_errno("open", path);
	if (fstat(fd, &st) == -1) {
		struct werr *err = werr_errno("stat", path);

		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return werr_new(WEXIT_INPUT, "'%s' is %s, not a regular file; "
		    "warden reads only regular files", path,
		    file_kind(st.st_mode));
	}
	if ((flags = fcntl(fd, F_GETFL)) != -1)
		(void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	*fd_out = fd;
	if (size_out != NULL)
		*size_out = st.st_size;
	return NULL;
}

static struct werr *
too_large(const char *path, size_t max)
{
	if (max % (1u << 20) == 0)
		return werr_new(WEXIT_INPUT, "'%s' is larger than %zu MiB, "
		    "the most warden reads from such a file", path, max >> 20);
	return werr_new(WEXIT_INPUT, "'%s' is larger than %zu bytes, "
	    "the most warden reads from such a file", path, max);
}

/* Read fd until its end or max bytes into out; *more says whether bytes
 * were left after max. */
static struct werr *
read_fd(struct buf *out, int fd, const char *name, size_t max, int *more)
{
	char chunk[65536];
	ssize_t n;

	*more = 0;
	buf_reset(out);
	buf_grow(out, 0);
	out->data[0] = '\0';	/* an empty file is an empty string */
	for (;;) {
		size_t want = sizeof(chunk);

		/* Never hold more than max bytes: one byte past it says
		 * there is more, without reading the rest. */
		if (max - out->len + 1 < want)
			want = max - out->len + 1;
		n = read(fd, chunk, want);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return werr_errno("read", name);
		}
		if (n == 0)
			return NULL;
		if ((size_t)n > max - out->len) {
			buf_add(out, chunk, max - out->len);
			*more = 1;
			return NULL;
		}
		buf_add(out, chunk, (size_t)n);
	}
}

struct werr *
file_read_fd_max(struct buf *out, int fd, const char *name, size_t max)
{
	struct werr *err;
	int more;

	if ((err = read_fd(out, fd, name, max, &more)) == NULL && more) {
		buf_free(out);
		err = too_large(name, max);
	}
	return err;
}

struct werr *
file_read_max(struct buf *out, const char *path, size_t max)
{
	struct werr *err;
	off_t size;
	int fd;

	if ((err = file_open_regular(&fd, path, &size)) != NULL)
		return err;
	if (size > 0 && (uint64_t)size > max) {
		close(fd);
		return too_large(path, max);
	}
	buf_reset(out);
	buf_grow(out, (size_t)size);
	err = file_read_fd_max(out, fd, path, max);
	close(fd);
	return err;
}

struct werr *
file_read(struct buf *out, const char *path)
{
	return file_read_max(out, path, FILE_MAX_ANY);
}

struct werr *
file_read_tail(struct buf *out, const char *path, size_t max)
{
	struct werr *err;
	off_t size;
	int fd, more;

	if ((err = file_open_regular(&fd, path, &size)) != NULL)
		return err;
	if (size > 0 && (uint64_t)size > max &&
	    lseek(fd, size - (off_t)max, SEEK_SET) == (off_t)-1) {
		err = werr_errno("seek", path);
		close(fd);
		return err;
	}
	/* Bytes written since the seek are left for the next look. */
	err = read_fd(out, fd, path, max, &more);
	close(fd);
	return err;
}

static struct werr *
write_all(int fd, const void *data, size_t len, const char *path)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n == -1) {
			if (errno == EINTR)
				continue;
			return werr_errno("write", path);
		}
		p += n;
		len -= (size_t)n;
	}
	return NULL;
}

struct werr *
file_write_atomic(const char *path, const void *data, size_t len)
{
	struct werr *err;
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	int fd;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd == -1) {
		err = werr_errno("create", tmp);
		free(tmp);
		return err;
	}
	err = write_all(fd, data, len, tmp);
	if (err == NULL && fsync(fd) == -1)
		err = werr_errno("fsync", tmp);
	if (close(fd) == -1 && err == NULL)
		err = werr_errno("close", tmp);
	if (err == NULL && rename(tmp, path) == -1)
		err = werr_errno("rename", path);
	if (err != NULL)
		unlink(tmp);
	free(tmp);
	return err;
}

struct werr *
file_write_fd(int fd, const void *data, size_t len, const char *name)
{
	return write_all(fd, data, len, name);
}

struct werr *
file_read_tail_fd(struct buf *out, int fd, const char *name, size_t max)
{
	struct stat st;
	off_t at;

	buf_reset(out);
	buf_grow(out, 0);
	out->data[0] = '\0';
	if (fstat(fd, &st) == -1)
		return werr_errno("stat", name);
	if (!S_ISREG(st.st_mode))
		return werr_new(WEXIT_INPUT, "'%s' is %s, not a regular file; "
		    "warden reads only regular files", name,
		    file_kind(st.st_mode));
	at = st.st_size > (off_t)max ? st.st_size - (off_t)max : 0;
	while (out->len < max) {
		char chunk[65536];
		size_t want = max - out->len < sizeof(chunk) ?
		    max - out->len : sizeof(chunk);
		ssize_t n = pread(fd, chunk, want, at);

		if (n == -1) {
			if (errno == EINTR)
				continue;
			return werr_errno("read", name);
		}
		if (n == 0)
			break;
		buf_add(out, chunk, (size_t)n);
		at += n;
	}
	return NULL;
}

struct werr *
file_append(const char *path, const void *data, size_t len)
{
	struct werr *err;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
	    0644);
	if (fd == -1)
		return werr_errno("open", path);
	err = write_all(fd, data, len, path);
	if (close(fd) == -1 && err == NULL)
		err = werr_errno("close", path);
	return err;
}

struct werr *
mkdir_p(const char *path)
{
	char *p = xstrdup(path);
	char *s;

	for (s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) == -1 && errno != EEXIST) {
			struct werr *err = werr_errno("mkdir", p);

			free(p);
			return err;
		}
		*s = '/';
	}
	if (mkdir(p, 0755) == -1 && errno != EEXIST) {
		struct werr *err = werr_errno("mkdir", p);

		free(p);
		return err;
	}
	free(p);
	return NULL;
}

struct werr *
mkdir_real(const char *path)
{
	struct stat st;
	struct werr *err;

	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return NULL;
	if ((err = path_remove_tree(path)) != NULL)
		return err;
	return mkdir_p(path);
}

static int
remove_entry(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) == -1 ? -1 : 0;
	return unlink(path) == -1 ? -1 : 0;
}

struct werr *
path_remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == -1)
		return errno == ENOENT ? NULL : werr_errno("lstat", path);
	if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == -1)
		return werr_errno("remove", path);
	return NULL;
}

int
path_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

int
path_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char *
path_join(const char *a, const char *b)
{
	size_t la = strlen(a);

	if (la > 0 && a[la - 1] == '/')
		return xasprintf("%s%s", a, b);
	return xasprintf("%s/%s", a, b);
}

uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void
utc_iso_from_time(char *out, size_t outlen, time_t t)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, outlen, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void
utc_now_iso(char *out, size_t outlen)
{
	struct timespec ts;
	struct tm tm;
	char base[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, outlen, "%s.%03ldZ", base, ts.tv_nsec / 1000000L);
}

int
str_endswith(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

int
str_startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int
strcmp_ptr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int
text_is_utf8(const char *s)
{
	json_t *t = json_string(s);

	json_decref(t);
	return t != NULL;
}

struct werr *
text_check(const char *what, const char *s)
{
	if (s == NULL || text_is_utf8(s))
		return NULL;
	return werr_new(WEXIT_INPUT, "'%s' is not valid UTF-8 text", what);
}

size_t
utf8_seq_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	unsigned min;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, min = 0x80;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, min = 0x10000;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (len == 3) {
		unsigned cp = ((s[0] & 0x0fu) << 12) | ((s[1] & 0x3fu) << 6) |
		    (s[2] & 0x3fu);

		if (cp < min || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
	} else if (len == 4) {
		unsigned cp = ((s[0] & 0x07u) << 18) | ((s[1] & 0x3fu) << 12) |
		    ((s[2] & 0x3fu) << 6) | (s[3] & 0x3fu);

		if (cp < min || cp > 0x10ffff)
			return 0;
	}
	return len;
}

void
text_make_utf8(struct buf *b, size_t from)
{
	struct buf out = BUF_INIT;
	const unsigned char *s;
	size_t i, n;

	if (b->data == NULL || from >= b->len)
		return;
	s = (const unsigned char *)b->data;
	for (i = from; i < b->len; i += n)
		if ((n = utf8_seq_len(s + i, b->len - i)) == 0 || s[i] == 0)
			break;
	if (i == b->len)
		return;		/* already valid: the common case */
	buf_add(&out, b->data, i);
	while (i < b->len) {
		n = utf8_seq_len(s + i, b->len - i);
		if (n == 0 || s[i] == 0) {
			buf_puts(&out, "\xef\xbf\xbd");
			n = 1;
		} else
			buf_add(&out, s + i, n);
		i += n;
	}
	buf_free(b);
	*b = out;
}

json_t *
json_text(const char *s)
{
	struct buf b = BUF_INIT;
	json_t *j;

	if (s == NULL)
		return NULL;
	if ((j = json_string(s)) != NULL)
		return j;
	buf_puts(&b, s);
	text_make_utf8(&b, 0);
	j = json_string(buf_cstr(&b));
	buf_free(&b);
	return j;
}

/* s with every occurrence of root (as a path: followed by '/' or the
 * end) written as ".". */
static json_t *
relative_text(const char *s, const char *root, size_t rl)
{
	struct buf b = BUF_INIT;
	json_t *v;

	while (*s != '\0')
		if (strncmp(s, root, rl) == 0 && (s[rl] == '/' || s[rl] == '\0')) {
			buf_addch(&b, '.');
			s += rl;
		} else
			buf_addch(&b, *s++);
	v = json_text(buf_cstr(&b));
	buf_free(&b);
	return v;
}

json_t *
json_paths_relative(const json_t *v, const char *root)
{
	size_t rl = root != NULL ? strlen(root) : 0, i;
	const char *key;
	json_t *out, *x;

	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (json_is_string(v) && rl > 1)
		return relative_text(json_string_value(v), root, rl);
	if (json_is_object(v)) {
		out = json_object();
		json_object_foreach((json_t *)v, key, x)
			json_object_set_new(out, key, json_paths_relative(x,
			    root));
		return out;
	}
	if (json_is_array(v)) {
		out = json_array();
		json_array_foreach(v, i, x)
			json_array_append_new(out, json_paths_relative(x, root));
		return out;
	}
	return json_deep_copy(v);
}
