/*
 * chart.h - one line or scatter chart drawn with cairo into SVG bytes:
 * a title, axes labelled with their units, "nice" ticks, a legend,
 * optional horizontal rules (RAM, the Metal hint).
 *
 * Every series is told apart without colour too: each has a marker
 * shape and a dash pattern as well as a colour, and the caller gives
 * the series of one chart distinct (marker, dash) pairs. Lines are drawn
 * first, the series drawn first the widest, so a line exactly under
 * another shows at its edges and through the other's dash gaps; then
 * the markers, hollow, so two shapes at one point both show. Point and
 * rule labels are placed greedily: each in the first of a ring of
 * candidate offsets around its point (or along its rule) whose box
 * meets no label placed before it, stays in the plot and, if it can,
 * covers no marker; a label that fits nowhere is left out and counted.
 * chart_svg can report what it drew (struct chart_layout), so a test
 * can check the series and the label boxes.
 *
 * Drawn on an opaque white card with dark ink, so it reads the same on
 * GitHub's white and dark backgrounds. The bytes depend only on the
 * chart and on cairo and the fonts it finds: cairo's process-wide
 * surface counter is renumbered per document, so the same chart gives
 * the same SVG whatever was drawn before it in the process. Never
 * prints.
 */
#ifndef WARDEN_CHART_H
#define WARDEN_CHART_H

#include <stddef.h>

#include "buf.h"
#include "error.h"

#define CHART_MARKERS 8	/* marker shapes, index mod this */
#define CHART_DASHES 6		/* dash patterns, index mod this; 0 solid */

struct chart_series {
	const char *name;	/* legend text */
	const double *x, *y;
	const char *const *point_labels;	/* per point, may be NULL */
	size_t n;
	int color;		/* palette index */
	int marker;		/* marker shape index */
	int dash;		/* dash pattern index (ignored by a scatter) */
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

/* A box in the SVG's user units, y down. */
struct chart_box {
	double x, y, w, h;
};

/* What chart_svg drew: each series with its style (in legend order),
 * and the box of every text placed in the plot or the legend. */
struct chart_layout {
	struct chart_drawn {
		char *name;
		int color, marker, dash;
		size_t points;		/* finite points drawn */
	} *series;
	size_t nseries;
	struct chart_label {
		char *text;
		enum { CHART_LABEL_LEGEND, CHART_LABEL_POINT,
		    CHART_LABEL_RULE } kind;
		struct chart_box box;
	} *labels;
	size_t nlabels;
	size_t dropped;		/* point or rule labels that fit nowhere */
};

/* Render c as SVG into out (appended); with layout, say what was drawn
 * (chart_layout_free). */
struct werr *chart_svg(struct buf *out, const struct chart *c,
    struct chart_layout *layout);
void chart_layout_free(struct chart_layout *layout);
/* Do two boxes overlap (more than touch)? */
int chart_boxes_overlap(const struct chart_box *a, const struct chart_box *b);
/* Release what cairo and fontconfig keep between charts (font caches);
 * the next chart builds them again. */
void chart_release(void);

#endif
