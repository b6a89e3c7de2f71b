/*
 * isotime.h - ISO 8601 dates and times from the command line, as the UTC
 * text warden stores. Pure string work; never prints.
 */
#ifndef WARDEN_ISOTIME_H
#define WARDEN_ISOTIME_H

/* "YYYY-MM-DDTHH:MM:SS.mmmZ" and its NUL. */
#define ISOTIME_LEN 25

/* Examples of the forms accepted, for messages (warden(1) lists all). */
#define ISOTIME_EXAMPLES "2026-12-01, 2026-12-01T10:00 or " \
	"2026-12-01T10:00:30.5+02:00"

/*
 * Parse s, one of: YYYY-MM-DD; YYYY-MM-DD(T| )HH:MM[:SS[(.|,)FRACTION]]
 * followed by nothing (UTC), Z, or an offset +HH, +HH:MM or +HHMM (or -).
 * On success write the same instant as "YYYY-MM-DDTHH:MM:SS.mmmZ" (a
 * fraction past the millisecond rounds up) and return 0; -1 when s is not
 * one of those forms or a field is out of range.
 */
int isotime_to_utc(char out[ISOTIME_LEN], const char *s);

#endif
