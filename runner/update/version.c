/*
 * version.c - version order for tags and package versions. See version.h.
 * Never allocates: compared in place, digit runs without conversion so a
 * build number of any length compares right.
 */
#include "config.h"

#include <ctype.h>
#include <fnmatch.h>
#include <string.h>

#include "version.h"

static int
is_sep(char c)
{
	return c == '.' || c == '-' || c == '_' || c == '+';
}

/* Does s (after separators) start a pre-release suffix? */
static int
prerelease_suffix(const char *s)
{
	static const char *const words[] = { "dev", "alpha", "beta", "preview",
	    "pre", "rc", "a", "b", "c", NULL };
	const char *const *w;
	size_t n;

	while (is_sep(*s))
		s++;
	for (w = words; *w != NULL; w++) {
		n = strlen(*w);
		if (strncasecmp(s, *w, n) == 0 &&
		    (s[n] == '\0' || isdigit((unsigned char)s[n]) || is_sep(s[n])))
			return 1;
	}
	return 0;
}

/* Compare two digit runs of lengths na, nb as numbers. */
static int
digits_compare(const char *a, size_t na, const char *b, size_t nb)
{
	int c;

	while (na > 1 && *a == '0') {
		a++;
		na--;
	}
	while (nb > 1 && *b == '0') {
		b++;
		nb--;
	}
	if (na != nb)
		return na < nb ? -1 : 1;
	c = memcmp(a, b, na);
	return c < 0 ? -1 : c > 0;
}

int
version_compare(const char *a, const char *b)
{
	size_t na, nb;
	int c;

	for (;;) {
		while (is_sep(*a) && is_sep(*b)) {
			a++;
			b++;
		}
		if (*a == '\0' || *b == '\0')
			break;
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			for (na = 0; isdigit((unsigned char)a[na]); na++)
				;
			for (nb = 0; isdigit((unsigned char)b[nb]); nb++)
				;
			if ((c = digits_compare(a, na, b, nb)) != 0)
				return c;
			a += na;
			b += nb;
			continue;
		}
		if (isdigit((unsigned char)*a) != isdigit((unsigned char)*b)) {
			/* 1.0.1 against 1.0rc1: a number beats a pre-release
			 * word, and a separator beats a word */
			if (prerelease_suffix(a))
				return -1;
			if (prerelease_suffix(b))
				return 1;
			return isdigit((unsigned char)*a) ? 1 : -1;
		}
		if (is_sep(*a) != is_sep(*b)) {
			if (prerelease_suffix(a))
				return -1;
			if (prerelease_suffix(b))
				return 1;
			return is_sep(*a) ? 1 : -1;
		}
		for (na = 0; a[na] && !isdigit((unsigned char)a[na]) && !is_sep(a[na]); na++)
			;
		for (nb = 0; b[nb] && !isdigit((unsigned char)b[nb]) && !is_sep(b[nb]); nb++)
			;
		c = strncasecmp(a, b, na < nb ? na : nb);
		if (c == 0 && na != nb)
			c = na < nb ? -1 : 1;
		if (c != 0)
			return c < 0 ? -1 : 1;
		a += na;
		b += nb;
	}
	if (*a == '\0' && *b == '\0')
		return 0;
	/* One goes on: a pre-release suffix is older, anything else newer. */
	if (*a == '\0')
		return prerelease_suffix(b) ? 1 : -1;
	return prerelease_suffix(a) ? -1 : 1;
}

int
version_tag_matches(const char *pattern, const char *tag)
{
	return fnmatch(pattern, tag, 0) == 0;
}
