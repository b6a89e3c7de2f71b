/* Unit tests of runner/base/quote.c: untrusted text quoted for a terminal. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "buf.h"
#include "quote.h"

/* s (len bytes) quoted with flags, compared with want. */
static void
check(const char *s, size_t len, unsigned flags, const char *want)
{
	struct buf b = BUF_INIT;

	quote_term(&b, s, len, flags);
	assert_string_equal(buf_cstr(&b), want);
	buf_free(&b);
}

#define CHECK(lit, flags, want) check(lit, sizeof(lit) - 1, flags, want)

/* Every byte of out is printable ASCII, or part of valid UTF-8 above
 * U+009F, or (where allowed) a newline or tab. */
static void
assert_safe(const char *out, int lines)
{
	const unsigned char *u = (const unsigned char *)out;

	for (; *u != '\0'; u++) {
		if (lines && (*u == '\n' || *u == '\t'))
			continue;
		assert_true(*u >= 0x20 && *u != 0x7f);
		if (*u == 0xc2)
			assert_true(u[1] >= 0xa0);	/* no C1 */
	}
}

static void
test_printable_text_passes(void **state)
{
	(void)state;
	CHECK("adapters/engines/llama.cpp.json", 0,
	    "adapters/engines/llama.cpp.json");
	CHECK("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80 \xc2\xa0", 0,
	    "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80 \xc2\xa0");
	CHECK("", 0, "");
}

static void
test_terminal_controls_escaped(void **state)
{
	(void)state;
	CHECK("a\x1b[2Jb", 0, "a\\x1b[2Jb");
	CHECK("\x1b]52;c;aGk=\x07", 0, "\\x1b]52;c;aGk=\\x07");
	CHECK("\x1b]0;title\x1b\\", 0, "\\x1b]0;title\\x1b\\\\");
	CHECK("x\x7fy\x01", 0, "x\\x7fy\\x01");
	CHECK("nul\0byte", 0, "nul\\x00byte");
	/* C1 as UTF-8 (CSI U+009B, OSC U+009D) */
	CHECK("\xc2\x9b" "2J\xc2\x9d", 0, "\\xc2\\x9b2J\\xc2\\x9d");
	/* bidi override, isolate, zero width space, line separator, BOM */
	CHECK("a\xe2\x80\xae" "b\xe2\x81\xa6" "c\xe2\x80\x8b" "d\xe2\x80\xa8"
	    "e\xef\xbb\xbf", 0,
	    "a\\xe2\\x80\\xaeb\\xe2\\x81\\xa6c\\xe2\\x80\\x8bd\\xe2\\x80\\xa8e"
	    "\\xef\\xbb\\xbf");
}

static void
test_one_line_cannot_break(void **state)
{
	(void)state;
	CHECK("x\ngate: clean", 0, "x\\ngate: clean");
	CHECK("x\rgate: clean\ty", 0, "x\\rgate: clean\\ty");
	CHECK("\x0b\x0c\x85", 0, "\\x0b\\x0c\\x85");
}

static void
test_backslash_makes_it_unambiguous(void **state)
{
	(void)state;
	CHECK("\\x1b", 0, "\\\\x1b");
	CHECK("\x1b", 0, "\\x1b");
	CHECK("a\\b", QUOTE_KEEP_BACKSLASH, "a\\b");
}

static void
test_invalid_utf8_bytes_escaped(void **state)
{
	(void)state;
	CHECK("caf\xc3(", 0, "caf\\xc3(");
	CHECK("\xff\xfe", 0, "\\xff\\xfe");
	CHECK("\xc0\xaf", 0, "\\xc0\\xaf");		/* overlong '/' */
	CHECK("\xed\xa0\x80", 0, "\\xed\\xa0\\x80");	/* surrogate */
	CHECK("\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80"); /* > U+10FFFF */
	CHECK("end\xe2\x86", 0, "end\\xe2\\x86");	/* cut short */
}

static void
test_lines_keep_newlines_not_controls(void **state)
{
	(void)state;
	CHECK("+a\x1b[2J\n-b\tc\r\n", QUOTE_KEEP_LINES | QUOTE_KEEP_BACKSLASH,
	    "+a\\x1b[2J\n-b\tc\\r\n");
	CHECK("\\n", QUOTE_KEEP_LINES, "\\\\n");
}

/* The sink's mode changes nothing in text already quoted: no double
 * quoting when a printer quoted a field and the guard sees it again. */
static void
test_sink_mode_is_idempotent(void **state)
{
	static const char hostile[] = "a\\b\x1b[2J\n\xff\xc2\x9b\t\x07z";
	struct buf once = BUF_INIT, twice = BUF_INIT;
	unsigned sink = QUOTE_KEEP_LINES | QUOTE_KEEP_BACKSLASH;

	(void)state;
	quote_term(&once, hostile, sizeof(hostile) - 1, 0);
	quote_term(&twice, once.data, once.len, sink);
	assert_string_equal(buf_cstr(&once), buf_cstr(&twice));
	buf_reset(&once);
	buf_reset(&twice);
	quote_term(&once, hostile, sizeof(hostile) - 1, sink);
	quote_term(&twice, once.data, once.len, sink);
	assert_string_equal(buf_cstr(&once), buf_cstr(&twice));
	buf_free(&once);
	buf_free(&twice);
}

/* Whatever the bytes, the output is safe: all 256 bytes, and every pair
 * of bytes after a lead byte. */
static void
test_every_byte_is_safe(void **state)
{
	struct buf b = BUF_INIT;
	char s[3];
	unsigned i, j;

	(void)state;
	for (i = 0; i < 256; i++) {
		for (j = 0; j < 256; j++) {
			s[0] = (char)i;
			s[1] = (char)j;
			s[2] = (char)0x80;
			buf_reset(&b);
			quote_term(&b, s, 3, 0);
			assert_safe(buf_cstr(&b), 0);
			buf_reset(&b);
			quote_term(&b, s, 3, QUOTE_KEEP_LINES);
			assert_safe(buf_cstr(&b), 1);
		}
	}
	buf_free(&b);
}

static void
test_quote_str_ring(void **state)
{
	const char *a, *b;

	(void)state;
	a = quote_str("one\n");
	b = quote_str("two\x1b");
	assert_string_equal(a, "one\\n");
	assert_string_equal(b, "two\\x1b");
	assert_string_equal(quote_str(NULL), "");
	quote_release();
}

/* A Markdown field stays in its cell and line; a document keeps its
 * lines and loses every byte a terminal acts on. */
static void
test_markdown_field_and_document(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	quote_md(&b, "a|b\n- **Gate**: passed\x1b[2J\\x");
	assert_string_equal(buf_cstr(&b),
	    "a\\|b\\n- **Gate**: passed\\x1b[2J\\x");
	quote_md(&b, NULL);
	buf_reset(&b);
	buf_puts(&b, "# T\n\n| a | b\x1b]52;c;aGk=\x07 |\n\xe2\x80\xae\n");
	quote_md_doc(&b);
	assert_string_equal(buf_cstr(&b),
	    "# T\n\n| a | b\\x1b]52;c;aGk=\\x07 |\n\\xe2\\x80\\xae\n");
	assert_safe(buf_cstr(&b), 1);
	buf_free(&b);
}

static void
test_pending_tail(void **state)
{
	(void)state;
	assert_int_equal(quote_pending_tail("abc", 3), 0);
	assert_int_equal(quote_pending_tail("a\xe2", 2), 1);
	assert_int_equal(quote_pending_tail("a\xe2\x86", 3), 2);
	assert_int_equal(quote_pending_tail("a\xe2\x86\x92", 4), 0);
	assert_int_equal(quote_pending_tail("\xf0\x9f\x98", 3), 3);
	assert_int_equal(quote_pending_tail("a\xff", 2), 0);
	assert_int_equal(quote_pending_tail("\x80\x80\x80", 3), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_printable_text_passes),
		cmocka_unit_test(test_terminal_controls_escaped),
		cmocka_unit_test(test_one_line_cannot_break),
		cmocka_unit_test(test_backslash_makes_it_unambiguous),
		cmocka_unit_test(test_invalid_utf8_bytes_escaped),
		cmocka_unit_test(test_lines_keep_newlines_not_controls),
		cmocka_unit_test(test_sink_mode_is_idempotent),
		cmocka_unit_test(test_every_byte_is_safe),
		cmocka_unit_test(test_quote_str_ring),
		cmocka_unit_test(test_pending_tail),
		cmocka_unit_test(test_markdown_field_and_document),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
