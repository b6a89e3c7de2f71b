/*
 * chart.c - line and scatter charts with cairo's SVG surface: the frame,
 * the series (lines, then hollow markers), the legend, and the layout of
 * what was drawn; the rules and the labels are chart-labels.c's. See
 * chart.h. Never prints.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo.h>
#include <cairo-svg.h>
#ifdef HAVE_FONTCONFIG
#include <fontconfig/fontconfig.h>
#endif

#include "util.h"
#include "results/chart.h"
#include "results/chart-private.h"

/* Tableau 10, minus its pale yellow; all legible on white. */
static const double palette[][3] = {
	{ 0x4e, 0x79, 0xa7 }, { 0xf2, 0x8e, 0x2b }, { 0xe1, 0x57, 0x59 },
	{ 0x76, 0xb7, 0xb2 }, { 0x59, 0xa1, 0x4f }, { 0xb0, 0x7a, 0xa1 },
	{ 0xff, 0x9d, 0xa7 }, { 0x9c, 0x75, 0x5f }, { 0x3b, 0x3b, 0x3b },
};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

void
chart_set_color(cairo_t *cr, int i)
{
	const double *c = palette[(size_t)(i < 0 ? 0 : i) % NPALETTE];

	cairo_set_source_rgb(cr, c[0] / 255, c[1] / 255, c[2] / 255);
}

static cairo_status_t
write_buf(void *closure, const unsigned char *data, unsigned int len)
{
	buf_add(closure, data, len);
	return CAIRO_STATUS_SUCCESS;
}

/* A 1-2-5 step giving about five ticks over [lo, hi]. */
static double
nice_step(double span)
{
	double raw = span / 5, mag, f;

	if (!(raw > 0))
		return 1;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void
axis_fit(struct axis *a, double lo, double hi, int from_zero)
{
	if (a->log2) {
		a->lo = lo > 0 ? pow(2, floor(log2(lo))) : 1;
		a->hi = hi > a->lo ? pow(2, ceil(log2(hi))) : a->lo * 2;
		return;
	}
	if (from_zero && lo > 0)
		lo = 0;
	if (!(hi > lo))
		hi = lo + 1;
	a->step = nice_step(hi - lo);
	a->lo = floor(lo / a->step) * a->step;
	a->hi = ceil(hi / a->step) * a->step;
	if (a->hi <= a->lo)
		a->hi = a->lo + a->step;
}

/* Position of v on an axis of length len, as a fraction of len. */
double
chart_axis_pos(const struct axis *a, double v)
{
	if (a->log2)
		return (log2(v > 0 ? v : a->lo) - log2(a->lo)) /
		    (log2(a->hi) - log2(a->lo));
	return (v - a->lo) / (a->hi - a->lo);
}

/* As many decimals as the step needs: 0.25 -> 2, 0.005 -> 3. */
static void
tick_label(char *out, size_t len, double v, double step)
{
	int decimals = 0;

	while (decimals < 9 && fabs(step * pow(10, decimals) -
	    round(step * pow(10, decimals))) > 1e-9 * pow(10, decimals))
		decimals++;
	if (fabs(v) >= 10000 && step >= 1000)
		snprintf(out, len, "%.0fk", v / 1000);
	else
		snprintf(out, len, "%.*f", decimals, fabs(v) < step / 1e6 ? 0.0 :
		    v);
}

static void
text_at(cairo_t *cr, double x, double y, const char *s, double align)
{
	cairo_text_extents_t ext;

	cairo_text_extents(cr, s, &ext);
	cairo_move_to(cr, x - ext.x_advance * align, y);
	cairo_show_text(cr, s);
}

static void
draw_frame(cairo_t *cr, const struct chart *c, const struct axis *xa,
    const struct axis *ya)
{
	double pw = W - LEFT - RIGHT, ph = H - TOP - BOTTOM, v, x, y;
	char label[32];

	/* the card */
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_rectangle(cr, 0.5, 0.5, W - 1, H - 1);
	cairo_fill_preserve(cr);
	cairo_set_source_rgb(cr, 0.8, 0.8, 0.8);
	cairo_set_line_width(cr, 1);
	cairo_stroke(cr);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
	    CAIRO_FONT_WEIGHT_BOLD);
	cairo_set_font_size(cr, 15);
	cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
	text_at(cr, LEFT, 28, c->title, 0);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
	    CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, 12);
	/* grid and ticks */
	cairo_set_line_width(cr, 1);
	for (v = ya->lo; v <= ya->hi + ya->step / 2; v += ya->step) {
		y = TOP + ph * (1 - chart_axis_pos(ya, v));
		cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
		cairo_move_to(cr, LEFT, y);
		cairo_line_to(cr, LEFT + pw, y);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
		tick_label(label, sizeof(label), v, ya->step);
		text_at(cr, LEFT - 8, y + 4, label, 1);
	}
	for (v = xa->lo; xa->log2 ? v <= xa->hi * 1.0001 :
	    v <= xa->hi + xa->step / 2; v = xa->log2 ? v * 2 : v + xa->step) {
		x = LEFT + pw * chart_axis_pos(xa, v);
		cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
		cairo_move_to(cr, x, TOP);
		cairo_line_to(cr, x, TOP + ph);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
		tick_label(label, sizeof(label), v, xa->log2 ? 1 : xa->step);
		text_at(cr, x, TOP + ph + 18, label, 0.5);
	}
	cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
	cairo_rectangle(cr, LEFT, TOP, pw, ph);
	cairo_stroke(cr);
	/* axis labels */
	cairo_set_font_size(cr, 13);
	cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
	text_at(cr, LEFT + pw / 2, H - 16, c->xlabel, 0.5);
	cairo_save(cr);
	cairo_translate(cr, 22, TOP + ph / 2);
	cairo_rotate(cr, -M_PI / 2);
	text_at(cr, 0, 0, c->ylabel, 0.5);
	cairo_restore(cr);
}

/* Dash patterns, in px; the first is a solid line. */
static const double dash_on_off[CHART_DASHES][6] = {
	{ 0 }, { 8, 4 }, { 2, 3 }, { 8, 3, 2, 3 }, { 14, 4 },
	{ 8, 3, 2, 3, 2, 3 },
};
static const int dash_len[CHART_DASHES] = { 0, 2, 2, 4, 2, 6 };

static void
set_dash(cairo_t *cr, int i)
{
	i = (i < 0 ? 0 : i) % CHART_DASHES;
	cairo_set_dash(cr, dash_on_off[i], dash_len[i], 0);
}


/* A hollow marker of shape i at (x, y): circle, square, triangle up,
 * diamond, triangle down, plus, cross, asterisk. */
static void
draw_marker(cairo_t *cr, int i, double x, double y)
{
	const double r = MARKER_R;

	cairo_set_dash(cr, NULL, 0, 0);
	cairo_set_line_width(cr, 1.6);
	cairo_new_path(cr);
	switch ((i < 0 ? 0 : i) % CHART_MARKERS) {
	case 0:
		cairo_arc(cr, x, y, r, 0, 2 * M_PI);
		break;
	case 1:
		cairo_rectangle(cr, x - r * 0.85, y - r * 0.85, r * 1.7,
		    r * 1.7);
		break;
	case 2:
		cairo_move_to(cr, x, y - r * 1.1);
		cairo_line_to(cr, x + r, y + r * 0.8);
		cairo_line_to(cr, x - r, y + r * 0.8);
		cairo_close_path(cr);
		break;
	case 3:
		cairo_move_to(cr, x, y - r * 1.2);
		cairo_line_to(cr, x + r, y);
		cairo_line_to(cr, x, y + r * 1.2);
		cairo_line_to(cr, x - r, y);
		cairo_close_path(cr);
		break;
	case 4:
		cairo_move_to(cr, x, y + r * 1.1);
		cairo_line_to(cr, x + r, y - r * 0.8);
		cairo_line_to(cr, x - r, y - r * 0.8);
		cairo_close_path(cr);
		break;
	case 5:
		cairo_move_to(cr, x - r * 1.2, y);
		cairo_line_to(cr, x + r * 1.2, y);
		cairo_move_to(cr, x, y - r * 1.2);
		cairo_line_to(cr, x, y + r * 1.2);
		break;
	case 6:
		cairo_move_to(cr, x - r, y - r);
		cairo_line_to(cr, x + r, y + r);
		cairo_move_to(cr, x - r, y + r);
		cairo_line_to(cr, x + r, y - r);
		break;
	default:
		cairo_move_to(cr, x - r * 1.2, y);
		cairo_line_to(cr, x + r * 1.2, y);
		cairo_move_to(cr, x - r * 0.6, y - r);
		cairo_line_to(cr, x + r * 0.6, y + r);
		cairo_move_to(cr, x - r * 0.6, y + r);
		cairo_line_to(cr, x + r * 0.6, y - r);
		break;
	}
	cairo_stroke(cr);
}

/* A trace of many samples shows about this many markers. */
#define MARKERS_PER_LINE 12

size_t
chart_marker_step(const struct chart_series *s)
{
	return s->points_only || s->n <= 40 ? 1 :
	    (s->n + MARKERS_PER_LINE - 1) / MARKERS_PER_LINE;
}

int
chart_point_at(const struct plot_area *pa, const struct chart_series *s,
    size_t i, double *x, double *y)
{
	if (!isfinite(s->x[i]) || !isfinite(s->y[i]))
		return 0;
	*x = LEFT + pa->pw * chart_axis_pos(&pa->xa, s->x[i]);
	*y = TOP + pa->ph * (1 - chart_axis_pos(&pa->ya, s->y[i]));
	return 1;
}

/* Series k of n: the first drawn the widest, so a line exactly under
 * a later one shows at its edges. */
static double
line_width(size_t k, size_t n)
{
	return n > 1 ? 1.5 + 2.0 * (double)(n - 1 - k) / (double)(n - 1) : 2;
}

static void
draw_line(cairo_t *cr, const struct chart_series *s,
    const struct plot_area *pa, double width)
{
	double x, y;
	size_t i;
	int started = 0;

	if (s->points_only)
		return;
	chart_set_color(cr, s->color);
	cairo_set_line_width(cr, width);
	set_dash(cr, s->dash);
	cairo_new_path(cr);
	for (i = 0; i < s->n; i++) {
		if (!chart_point_at(pa, s, i, &x, &y))
			continue;
		if (!started)
			cairo_move_to(cr, x, y);
		else
			cairo_line_to(cr, x, y);
		started = 1;
	}
	if (started)
		cairo_stroke(cr);
	cairo_set_dash(cr, NULL, 0, 0);
}

static void
draw_markers(cairo_t *cr, const struct chart_series *s,
    const struct plot_area *pa)
{
	size_t i, step = chart_marker_step(s);
	double x, y;

	chart_set_color(cr, s->color);
	for (i = 0; i < s->n; i += step)
		if (chart_point_at(pa, s, i, &x, &y))
			draw_marker(cr, s->marker, x, y);
}

static void
draw_legend(cairo_t *cr, const struct chart *c, struct chart_layout *layout)
{
	double x = W - RIGHT + 16, y = TOP + 8, row = 20, size = 12;
	cairo_font_extents_t fe;
	cairo_text_extents_t ext;
	struct chart_box box;
	size_t i;

	/* rows close up (and the text shrinks) so every entry fits */
	if (c->nseries > 0 && row * (double)c->nseries > H - TOP - 16) {
		row = (H - TOP - 16) / (double)c->nseries;
		size = row * 0.6 < size ? row * 0.6 : size;
	}
	cairo_set_font_size(cr, size);
	cairo_font_extents(cr, &fe);
	for (i = 0; i < c->nseries; i++, y += row) {
		chart_set_color(cr, c->series[i].color);
		if (!c->series[i].points_only) {
			cairo_set_line_width(cr, 2);
			set_dash(cr, c->series[i].dash);
			cairo_move_to(cr, x, y);
			cairo_line_to(cr, x + 22, y);
			cairo_stroke(cr);
		}
		draw_marker(cr, c->series[i].marker, x + 11, y);
		cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
		cairo_text_extents(cr, c->series[i].name, &ext);
		box.x = x + 30;
		box.y = y + size / 3 - fe.ascent;
		box.w = ext.x_advance;
		box.h = fe.ascent + fe.descent;
		if (box.h > row)	/* a line of text within its row */
			box.h = row;
		cairo_move_to(cr, box.x, y + size / 3);
		cairo_show_text(cr, c->series[i].name);
		chart_layout_label(layout, c->series[i].name, CHART_LABEL_LEGEND,
		    &box);
	}
}

/* cairo numbers its surfaces across the process ("surface7"); number
 * them from 1 per document so the bytes do not depend on history. */
static void
renumber_surfaces(struct buf *svg, size_t from)
{
	struct buf out = BUF_INIT;
	const char *p = svg->data + from, *q, *end = svg->data + svg->len;
	unsigned long map[64], next = 1, n;
	size_t nmap = 0, i;
	char *e;

	buf_add(&out, svg->data, from);
	while ((q = strstr(p, "surface")) != NULL && q < end) {
		buf_add(&out, p, (size_t)(q - p) + 7);
		p = q + 7;
		n = strtoul(p, &e, 10);
		if (e == p)
			continue;
		for (i = 0; i < nmap && map[2 * i] != n; i++)
			;
		if (i == nmap && nmap < 32) {
			map[2 * nmap] = n;
			map[2 * nmap + 1] = next++;
			nmap++;
		}
		buf_printf(&out, "%lu", i < nmap ? map[2 * i + 1] : n);
		p = e;
	}
	buf_add(&out, p, (size_t)(end - p));
	buf_free(svg);
	*svg = out;
}

static void
layout_series(struct chart_layout *l, const struct chart *c)
{
	size_t i, j;

	l->series = xcalloc(c->nseries + 1, sizeof(*l->series));
	l->nseries = c->nseries;
	for (i = 0; i < c->nseries; i++) {
		l->series[i].name = xstrdup(c->series[i].name);
		l->series[i].color = c->series[i].color;
		l->series[i].marker = c->series[i].marker % CHART_MARKERS;
		l->series[i].dash = c->series[i].points_only ? -1 :
		    c->series[i].dash % CHART_DASHES;
		for (j = 0; j < c->series[i].n; j++)
			if (isfinite(c->series[i].x[j]) &&
			    isfinite(c->series[i].y[j]))
				l->series[i].points++;
	}
}

struct werr *
chart_svg(struct buf *out, const struct chart *c, struct chart_layout *layout)
{
	struct plot_area pa;
	struct boxes placed = { NULL, 0 }, markers = { NULL, 0 };
	double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
	cairo_surface_t *surface;
	cairo_status_t st;
	cairo_t *cr;
	size_t i, j, from = out->len, dropped;

	memset(&pa, 0, sizeof(pa));
	pa.xa.step = pa.ya.step = 1;
	pa.xa.log2 = c->xlog2;
	pa.pw = W - LEFT - RIGHT;
	pa.ph = H - TOP - BOTTOM;
	if (layout != NULL)
		memset(layout, 0, sizeof(*layout));
	for (i = 0; i < c->nseries; i++)
		for (j = 0; j < c->series[i].n; j++) {
			if (!isfinite(c->series[i].x[j]) ||
			    !isfinite(c->series[i].y[j]))
				continue;
			xlo = fmin(xlo, c->series[i].x[j]);
			xhi = fmax(xhi, c->series[i].x[j]);
			ylo = fmin(ylo, c->series[i].y[j]);
			yhi = fmax(yhi, c->series[i].y[j]);
		}
	for (i = 0; i < c->nrules; i++) {
		ylo = fmin(ylo, c->rules[i].y);
		yhi = fmax(yhi, c->rules[i].y);
	}
	if (!isfinite(xlo)) {
		xlo = c->xlog2 ? 1 : 0;
		xhi = xlo + 1;
		ylo = 0;
		yhi = 1;
	}
	axis_fit(&pa.xa, xlo, xhi, c->xzero);
	axis_fit(&pa.ya, ylo, yhi * 1.05, 1);
	surface = cairo_svg_surface_create_for_stream(write_buf, out, W, H);
	cr = cairo_create(surface);
	draw_frame(cr, c, &pa.xa, &pa.ya);
	chart_marker_boxes(&markers, c, &pa);
	dropped = chart_draw_rules(cr, c, &pa, &placed, &markers, layout);
	for (i = 0; i < c->nseries; i++)
		draw_line(cr, &c->series[i], &pa, line_width(i, c->nseries));
	for (i = 0; i < c->nseries; i++)
		draw_markers(cr, &c->series[i], &pa);
	dropped += chart_draw_point_labels(cr, c, &pa, &placed, &markers, layout);
	draw_legend(cr, c, layout);
	if (layout != NULL) {
		layout_series(layout, c);
		layout->dropped = dropped;
	}
	free(placed.v);
	free(markers.v);
	st = cairo_status(cr);
	cairo_destroy(cr);
	cairo_surface_finish(surface);
	if (st == CAIRO_STATUS_SUCCESS)
		st = cairo_surface_status(surface);
	cairo_surface_destroy(surface);
	if (st != CAIRO_STATUS_SUCCESS) {
		if (layout != NULL)
			chart_layout_free(layout);
		return werr_new(WEXIT_ENV, "cairo: %s", cairo_status_to_string(st));
	}
	renumber_surfaces(out, from);
	return NULL;
}

void
chart_layout_free(struct chart_layout *layout)
{
	size_t i;

	for (i = 0; i < layout->nseries; i++)
		free(layout->series[i].name);
	for (i = 0; i < layout->nlabels; i++)
		free(layout->labels[i].text);
	free(layout->series);
	free(layout->labels);
	memset(layout, 0, sizeof(*layout));
}

void
chart_release(void)
{
	cairo_debug_reset_static_data();
#ifdef HAVE_FONTCONFIG
	FcFini();
#endif
}
