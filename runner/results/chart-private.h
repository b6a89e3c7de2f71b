/*
 * chart-private.h - what chart.c (the frame, the series, the legend) and
 * chart-labels.c (labels placed so no two overlap, the rules) share: the
 * geometry of the picture and the plot area. Internal to runner/results.
 */
#ifndef WARDEN_CHART_PRIVATE_H
#define WARDEN_CHART_PRIVATE_H

#include <stddef.h>

#include <cairo.h>

#include "results/chart.h"

#define W 760.0
#define H 440.0
#define LEFT 78.0
#define RIGHT 190.0		/* room for the legend */
#define TOP 46.0
#define BOTTOM 58.0

#define MARKER_R 4.0

struct axis {
	double lo, hi;		/* data range shown */
	double step;		/* tick step (linear) */
	int log2;
};

struct plot_area {
	struct axis xa, ya;
	double pw, ph;
};

/* The boxes already taken: placed labels (hard) and markers (soft). */
struct boxes {
	struct chart_box *v;
	size_t n;
};

/* ---- chart.c ---- */
void chart_set_color(cairo_t *cr, int i);
/* Where v lies on a, from 0 (lo) to 1 (hi). */
double chart_axis_pos(const struct axis *a, double v);
/* Point i of s in the picture; 0 when it is not finite. */
int chart_point_at(const struct plot_area *pa, const struct chart_series *s,
    size_t i, double *x, double *y);
/* Every how many points a marker is drawn. */
size_t chart_marker_step(const struct chart_series *s);

/* ---- chart-labels.c ---- */
void chart_boxes_add(struct boxes *b, double x, double y, double w, double h);
/* Record a label drawn in box in l (l may be NULL). */
void chart_layout_label(struct chart_layout *l, const char *text, int kind,
    const struct chart_box *box);
/* Labels of points; the count of those that found no place. */
size_t chart_draw_point_labels(cairo_t *cr, const struct chart *c,
    const struct plot_area *pa, struct boxes *placed,
    const struct boxes *markers, struct chart_layout *layout);
/* The rules and their labels; the count of labels that found no place. */
size_t chart_draw_rules(cairo_t *cr, const struct chart *c,
    const struct plot_area *pa, struct boxes *placed,
    const struct boxes *markers, struct chart_layout *layout);
/* The markers of every series, as boxes a label should not cover. */
void chart_marker_boxes(struct boxes *b, const struct chart *c,
    const struct plot_area *pa);

#endif
