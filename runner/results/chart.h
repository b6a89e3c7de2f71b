/*
 * chart.h - one line or scatter chart drawn with cairo into SVG bytes:
 * a title, axes labelled with their units, "nice" ticks, one colour per
 * series with a legend, optional horizontal rules (RAM, the Metal hint).
 * Drawn on an opaque white card with dark ink, so it reads the same on
 * GitHub's white and dark backgrounds.
 *
 * The bytes depend only on the chart and on cairo and the fonts it finds:
 * cairo's process-wide surface counter is renumbered per document, so the
 * same chart gives the same SVG whatever was drawn before it in the
 * process. Never prints.
 */
#ifndef WARDEN_CHART_H
#define WARDEN_CHART_H

#include <stddef.h>

#include "buf.h"
#include "error.h"

struct chart_series {
	const char *name;	/* legend text */
	const double *x, *y;
	const char *const *point_labels;	/* per point, may be NULL */
	size_t n;
	int color;		/* palette index */
	int dashed;
	int points_only;	/* a scatter: markers, no line */
};

struct chart_rule {
	double y;
	const char *label;
};

struct chart {
	const char *title;
	const char *xlabel, *ylabel;	/* with units: "time (s)" */
	int xlog2;			/* x on a log2 axis (concurrency) */
	int xzero;			/* a linear x axis starts at 0 */
	const struct chart_series *series;
	size_t nseries;
	const struct chart_rule *rules;
	size_t nrules;
};

/* Render c as SVG into out (appended). */
struct werr *chart_svg(struct buf *out, const struct chart *c);
/* Release what cairo and fontconfig keep between charts (font caches);
 * the next chart builds them again. */
void chart_release(void);

#endif
