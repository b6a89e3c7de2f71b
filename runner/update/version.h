/*
 * version.h - compare version strings and tag names as versions, not as
 * strings: b5000 > b999, v0.10 > v0.9, 1.0rc1 < 1.0 < 1.0.post1.
 * Pure functions; never allocate, never fail.
 */
#ifndef WARDEN_UPDATE_VERSION_H
#define WARDEN_UPDATE_VERSION_H

/* <0, 0, >0 as a is older than, the same as, newer than b. Digit runs
 * compare as numbers, other runs as text; a suffix that begins with a
 * pre-release word (a, alpha, b, beta, c, rc, pre, preview, dev) makes a
 * version older than the same version without it. */
int version_compare(const char *a, const char *b);

/* Does tag match the adapter's ref pattern (fnmatch: '*', '?', [...])? */
int version_tag_matches(const char *pattern, const char *tag);

#endif
