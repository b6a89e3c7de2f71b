/*
 * test-seatbelt.c - the Seatbelt profile sandbox-exec runs on macOS,
 * checked as text on any system: rules in the order SBPL needs (the
 * last matching rule wins), every path a -D parameter and never in the
 * text (however hostile), the binds over the hidden places in the spec's
 * order, and the network rules: "https" is outbound TCP to port 443 and
 * the resolver's socket, no UDP; "none" nothing in or out.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sandbox/sandbox.h"
#include "sandbox/seatbelt.h"
#include "util.h"

/* A path that breaks out of an SBPL string if it is ever pasted in. */
#define HOSTILE "/w/a\") (allow file-write* (subpath \"/"

/* As realpath would on a Mac: /tmp is /private/tmp; a path named
 * "missing" is not there. */
static char *
fake_real(const char *path)
{
	if (strstr(path, "missing") != NULL)
		return NULL;
	if (strncmp(path, "/tmp", 4) == 0)
		return xasprintf("/private%s", path);
	return xstrdup(path);
}

static char *const hidden[] = { "/Users", "/tmp", "/missing-run", NULL };

static void
spec_init(struct sandbox_spec *s, enum sandbox_net net)
{
	memset(s, 0, sizeof(*s));
	sandbox_spec_hide(s, "/Users/m/bench");
	sandbox_spec_bind(s, "/Users/m/bench/.git/objects", NULL, SANDBOX_READ);
	sandbox_spec_bind(s, "/Users/m/wt", NULL, SANDBOX_WRITE);
	sandbox_spec_bind(s, "/Users/m/wt/.git", NULL, SANDBOX_HIDE);
	sandbox_spec_bind(s, "/Users/m/run/view.gitfile", "/Users/m/wt/.git",
	    SANDBOX_READ);
	sandbox_spec_bind(s, "/missing/tool", NULL, SANDBOX_READ);
	sandbox_spec_bind(s, "/tmp/scratch", NULL, SANDBOX_WRITE);
	sandbox_spec_bind(s, HOSTILE, NULL, SANDBOX_WRITE);
	s->net = net;
	s->run_dir = xstrdup("/Users/m/run");
}

/* Where line (a whole line of the text) is, or -1. */
static long
line_at(const struct seatbelt *sb, const char *line)
{
	const char *t = sb->text.data, *p = t;
	size_t n = strlen(line);

	while ((p = strstr(p, line)) != NULL) {
		if ((p == t || p[-1] == '\n') && p[n] == '\n')
			return (long)(p - t);
		p += n;
	}
	return -1;
}

/* The value of parameter name, or NULL. */
static const char *
param_value(const struct seatbelt *sb, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < sb->nparams; i++)
		if (strncmp(sb->params[i], name, n) == 0 &&
		    sb->params[i][n] == '=')
			return sb->params[i] + n + 1;
	return NULL;
}

static void
test_rules_in_sbpl_order(void **state)
{
	struct sandbox_spec spec;
	struct seatbelt sb;

	spec_init(&spec, SANDBOX_NET_HTTPS);
	seatbelt_profile(&sb, &spec, hidden, "/Users/m/build", fake_real);
	/* The version first, then the default, then every write denied. */
	assert_int_equal(strncmp(sb.text.data,
	    "(version 1)\n(allow default)\n(deny file-write*)\n", 45), 0);
	/* The hidden places, then warden's folder, then the binds in the
	 * spec's order, the devices, the signals, the network last. */
	assert_true(line_at(&sb, "(deny file-read* network-outbound (subpath (param \"H0\")))") > 0);
	assert_true(line_at(&sb, "(deny file-read* network-outbound (subpath (param \"H2\")))") <
	    line_at(&sb, "(allow file-read* (subpath (param \"S0\")))"));
	assert_true(line_at(&sb, "(allow file-read* (subpath (param \"S0\")))") <
	    line_at(&sb, "(deny file-write* (subpath (param \"B0\")))"));
	assert_true(line_at(&sb, "(deny file-write* (subpath (param \"B0\")))") <
	    line_at(&sb, "(allow file-read* (subpath (param \"B1\")))"));
	assert_true(line_at(&sb, "(allow file-read* (subpath (param \"B1\")))") <
	    line_at(&sb, "(allow file-read* file-write* (subpath (param \"B2\")))"));
	assert_true(line_at(&sb, "(allow file-read* file-write* (subpath (param \"B2\")))") <
	    line_at(&sb, "(deny file-read* file-write* network-outbound (subpath (param \"B3\")))"));
	assert_true(line_at(&sb, "(deny file-read* file-write* network-outbound (subpath (param \"B3\")))") <
	    line_at(&sb, "(deny file-write* (literal (param \"B4\")))"));
	assert_true(line_at(&sb, "(allow file-read* file-write* (subpath (param \"B6\")))") <
	    line_at(&sb, "(deny signal)"));
	assert_true(line_at(&sb, "(deny signal)") <
	    line_at(&sb, "(allow signal (target same-sandbox))"));
	assert_true(line_at(&sb, "(allow signal (target same-sandbox))") <
	    line_at(&sb, "(deny network-outbound)"));
	seatbelt_free(&sb);
	sandbox_spec_free(&spec);
}

static void
test_paths_are_parameters_only(void **state)
{
	struct sandbox_spec spec;
	struct seatbelt sb;
	size_t i;

	spec_init(&spec, SANDBOX_NET_HOST);
	seatbelt_profile(&sb, &spec, hidden, "/Users/m/build", fake_real);
	/* Real paths, in order; a missing one left out, the numbers dense. */
	assert_string_equal(param_value(&sb, "H0"), "/Users");
	assert_string_equal(param_value(&sb, "H1"), "/private/tmp");
	assert_string_equal(param_value(&sb, "H2"), "/Users/m/bench");
	assert_null(param_value(&sb, "H3"));
	assert_string_equal(param_value(&sb, "S0"), "/Users/m/build");
	assert_string_equal(param_value(&sb, "B0"), "/Users/m/bench/.git/objects");
	assert_string_equal(param_value(&sb, "B1"), "/Users/m/bench/.git/objects");
	assert_string_equal(param_value(&sb, "B2"), "/Users/m/wt");
	assert_string_equal(param_value(&sb, "B3"), "/Users/m/wt/.git");
	/* Shown at another path: Seatbelt keeps what is at dst, read-only. */
	assert_string_equal(param_value(&sb, "B4"), "/Users/m/wt/.git");
	assert_string_equal(param_value(&sb, "B5"), "/private/tmp/scratch");
	assert_string_equal(param_value(&sb, "B6"), HOSTILE);
	assert_null(param_value(&sb, "B7"));
	/* No path in the text: every (param "X") has its -D, and the text
	 * names no folder of the spec. */
	for (i = 0; i < sb.nparams; i++) {
		char *ref = xasprintf("(param \"%.*s\")",
		    (int)(strchr(sb.params[i], '=') - sb.params[i]),
		    sb.params[i]);

		assert_non_null(strstr(sb.text.data, ref));
		free(ref);
	}
	assert_null(strstr(sb.text.data, "/Users"));
	assert_null(strstr(sb.text.data, "tmp"));
	assert_null(strstr(sb.text.data, "/w/a"));
	assert_null(strstr(sb.text.data, "missing"));
	seatbelt_free(&sb);
	sandbox_spec_free(&spec);
}

/* Every line one balanced expression, its strings closed. */
static void
test_every_line_is_balanced(void **state)
{
	enum sandbox_net nets[] = { SANDBOX_NET_HOST, SANDBOX_NET_HTTPS,
	    SANDBOX_NET_NONE };
	size_t k;

	for (k = 0; k < 3; k++) {
		struct sandbox_spec spec;
		struct seatbelt sb;
		const char *p;
		int depth = 0, quotes = 0;

		spec_init(&spec, nets[k]);
		seatbelt_profile(&sb, &spec, hidden, NULL, fake_real);
		assert_null(param_value(&sb, "S0"));
		for (p = sb.text.data; *p != '\0'; p++) {
			if (*p == '"')
				quotes++;
			else if (*p == '(' && quotes % 2 == 0)
				depth++;
			else if (*p == ')' && quotes % 2 == 0)
				depth--;
			else if (*p == '\n') {
				assert_int_equal(depth, 0);
				assert_int_equal(quotes % 2, 0);
			}
			assert_true(depth >= 0);
		}
		assert_int_equal(p[-1], '\n');
		seatbelt_free(&sb);
		sandbox_spec_free(&spec);
	}
}

static void
test_https_is_tcp_443_and_the_resolver(void **state)
{
	struct sandbox_spec spec;
	struct seatbelt sb;
	long deny, tcp, resolver;

	spec_init(&spec, SANDBOX_NET_HTTPS);
	seatbelt_profile(&sb, &spec, hidden, NULL, fake_real);
	deny = line_at(&sb, "(deny network-outbound)");
	tcp = line_at(&sb, "(allow network-outbound (remote tcp \"*:443\"))");
	resolver = line_at(&sb, "(allow network-outbound (literal \"/private/var/run/mDNSResponder\"))");
	/* Everything outbound denied (datagrams too), then TCP to 443 and
	 * mDNSResponder's socket allowed, after every other rule. */
	assert_true(deny > 0);
	assert_true(tcp > deny);
	assert_true(resolver > deny);
	assert_true(line_at(&sb, "(deny file-read* network-outbound (subpath (param \"H2\")))") < deny);
	assert_null(strstr(sb.text.data, "udp"));
	assert_null(strstr(sb.text.data, "(remote ip"));
	assert_null(strstr(sb.text.data, "network-bind"));
	assert_int_equal(strstr(sb.text.data, "(allow network") -
	    sb.text.data, tcp);
	seatbelt_free(&sb);
	sandbox_spec_free(&spec);
}

static void
test_none_and_host(void **state)
{
	struct sandbox_spec spec;
	struct seatbelt sb;

	spec_init(&spec, SANDBOX_NET_NONE);
	seatbelt_profile(&sb, &spec, hidden, NULL, fake_real);
	assert_true(line_at(&sb, "(deny network-outbound network-bind network-inbound)") >
	    line_at(&sb, "(allow signal (target same-sandbox))"));
	assert_null(strstr(sb.text.data, "(allow network"));
	seatbelt_free(&sb);
	sandbox_spec_free(&spec);

	/* host: the machine's network; only the hidden places' sockets
	 * are out of reach. */
	spec_init(&spec, SANDBOX_NET_HOST);
	seatbelt_profile(&sb, &spec, hidden, NULL, fake_real);
	assert_int_equal(line_at(&sb, "(deny network-outbound)"), -1);
	assert_null(strstr(sb.text.data, "network-bind"));
	assert_null(strstr(sb.text.data, "(allow network"));
	seatbelt_free(&sb);
	sandbox_spec_free(&spec);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules_in_sbpl_order),
		cmocka_unit_test(test_paths_are_parameters_only),
		cmocka_unit_test(test_every_line_is_balanced),
		cmocka_unit_test(test_https_is_tcp_443_and_the_resolver),
		cmocka_unit_test(test_none_and_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
