/* Unit tests of runner/base/beneath.c (a file below a trusted folder,
 * through no link) and of util.c's reads through a held descriptor. */
#include <sys/stat.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>

#include "beneath.h"
#include "util.h"

static char root[64];

static void
put(const char *rel, const char *text)
{
	char *p = path_join(root, rel);
	FILE *fp = fopen(p, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	free(p);
}

static int
setup(void **state)
{
	char *p;

	(void)state;
	snprintf(root, sizeof(root), "/tmp/warden-beneath.XXXXXX");
	if (mkdtemp(root) == NULL)
		return -1;
	p = path_join(root, "a");
	mkdir(p, 0755);
	free(p);
	put("a/plain.txt", "plain\n");
	put("outside.txt", "SECRET\n");
	p = path_join(root, "link.txt");
	if (symlink("outside.txt", p) != 0)
		return -1;
	free(p);
	p = path_join(root, "dirlink");
	if (symlink("a", p) != 0)
		return -1;
	free(p);
	p = path_join(root, "fifo");
	if (mkfifo(p, 0644) != 0)
		return -1;
	free(p);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	return path_remove_tree(root) == NULL ? 0 : -1;
}

static void
test_plain_file_is_read(void **state)
{
	struct buf b = BUF_INIT;
	struct werr *err;

	(void)state;
	err = file_read_beneath(&b, root, "a/plain.txt", 1024);
	assert_null(err);
	assert_string_equal(buf_cstr(&b), "plain\n");
	buf_free(&b);
}

static void
expect_refused(const char *rel, const char *words)
{
	struct buf b = BUF_INIT;
	struct werr *err = file_read_beneath(&b, root, rel, 1024);

	assert_non_null(err);
	assert_int_equal(err->exit, WEXIT_INPUT);
	if (strstr(err->msg, words) == NULL)
		fail_msg("'%s': '%s' does not say '%s'", rel, err->msg, words);
	assert_null(strstr(buf_cstr(&b), "SECRET"));
	werr_free(err);
	buf_free(&b);
}

static void
test_links_are_never_followed(void **state)
{
	(void)state;
	expect_refused("link.txt", "symbolic link");
	expect_refused("dirlink/plain.txt", "symbolic link");
}

static void
test_special_files_and_odd_paths_are_refused(void **state)
{
	(void)state;
	expect_refused("fifo", "not a regular file");	/* never blocks */
	expect_refused("a", "not a regular file");
	expect_refused("../etc/passwd", "not a plain path");
	expect_refused("a/../outside.txt", "not a plain path");
	expect_refused("/etc/passwd", "not a plain path");
	expect_refused("", "not a plain path");
	expect_refused("a//plain.txt", "not a plain path");
}

static void
test_bounds_and_roots(void **state)
{
	struct buf b = BUF_INIT;
	struct werr *err;
	char *inside = path_join(root, "a/plain.txt");

	(void)state;
	err = file_read_beneath(&b, root, "a/plain.txt", 3);
	assert_non_null(err);
	assert_non_null(strstr(err->msg, "larger than 3 bytes"));
	werr_free(err);
	err = file_read_under(&b, root, inside, 64);
	assert_null(err);
	assert_string_equal(buf_cstr(&b), "plain\n");
	err = file_read_under(&b, root, "/etc/passwd", 64);
	assert_non_null(err);
	werr_free(err);
	buf_free(&b);
	free(inside);
}

static void
test_tail_through_a_held_descriptor(void **state)
{
	char *log = path_join(root, "engine.log");
	struct buf b = BUF_INIT;
	struct werr *err;
	int fd;

	(void)state;
	fd = open(log, O_RDWR | O_CREAT | O_APPEND, 0644);
	assert_true(fd > 2);
	assert_null(file_write_fd(fd, "one\ntwo\nthree\n", 14, log));
	/* the run replaces the log by a link to a secret */
	assert_int_equal(unlink(log), 0);
	assert_int_equal(symlink("outside.txt", log), 0);
	err = file_read_tail_fd(&b, fd, log, 6);
	assert_null(err);
	assert_string_equal(buf_cstr(&b), "three\n");
	err = file_read_tail_fd(&b, fd, log, 1024);
	assert_null(err);
	assert_string_equal(buf_cstr(&b), "one\ntwo\nthree\n");
	close(fd);
	buf_free(&b);
	free(log);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_file_is_read),
		cmocka_unit_test(test_links_are_never_followed),
		cmocka_unit_test(test_special_files_and_odd_paths_are_refused),
		cmocka_unit_test(test_bounds_and_roots),
		cmocka_unit_test(test_tail_through_a_held_descriptor),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
