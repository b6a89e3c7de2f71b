/*
 * chart.c - line and scatter charts with cairo's SVG surface. See
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

#define W 760.0
#define H 440.0
#define LEFT 78.0
#define RIGHT 190.0		/* room for the legend */
#define TOP 46.0
#define BOTTOM 58.0

/* Tableau 10, minus its pale yellow; all legible on white. */
static const double palette[][3] = {
	{ 0x4e, 0x79, 0xa7 }, { 0xf2, 0x8e, 0x2b }, { 0xe1, 0x57, 0x59 },
	{ 0x76, 0xb7, 0xb2 }, { 0x59, 0xa1, 0x4f }, { 0xb0, 0x7a, 0xa1 },
	{ 0xff, 0x9d, 0xa7 }, { 0x9c, 0x75, 0x5f }, { 0x3b, 0x3b, 0x3b },
};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

static void
set_color(cairo_t *cr, int i)
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

struct axis {
	double lo, hi;		/* data range shown */
	double step;		/* tick step (linear) */
	int log2;
};

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
static double
axis_pos(const struct axis *a, double v)
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
		y = TOP + ph * (1 - axis_pos(ya, v));
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
		x = LEFT + pw * axis_pos(xa, v);
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

static void
draw_marker(cairo_t *cr, double x, double y)
{
	cairo_new_sub_path(cr);
	cairo_arc(cr, x, y, 3.5, 0, 2 * M_PI);
	cairo_fill(cr);
}

static void
draw_series(cairo_t *cr, const struct chart_series *s, const struct axis *xa,
    const struct axis *ya)
{
	double pw = W - LEFT - RIGHT, ph = H - TOP - BOTTOM, x, y;
	static const double dash[] = { 6, 4 };
	size_t i;
	int started = 0;

	set_color(cr, s->color);
	cairo_set_line_width(cr, 2);
	cairo_set_dash(cr, dash, s->dashed ? 2 : 0, 0);
	for (i = 0; i < s->n && !s->points_only; i++) {
		if (!isfinite(s->x[i]) || !isfinite(s->y[i]))
			continue;
		x = LEFT + pw * axis_pos(xa, s->x[i]);
		y = TOP + ph * (1 - axis_pos(ya, s->y[i]));
		if (!started)
			cairo_move_to(cr, x, y);
		else
			cairo_line_to(cr, x, y);
		started = 1;
	}
	if (started)
		cairo_stroke(cr);
	cairo_set_dash(cr, dash, 0, 0);
	cairo_set_font_size(cr, 10);
	/* a long trace reads better as a plain line */
	for (i = 0; i < s->n && (s->points_only || s->n <= 40); i++) {
		if (!isfinite(s->x[i]) || !isfinite(s->y[i]))
			continue;
		x = LEFT + pw * axis_pos(xa, s->x[i]);
		y = TOP + ph * (1 - axis_pos(ya, s->y[i]));
		draw_marker(cr, x, y);
		if (s->point_labels != NULL && s->point_labels[i] != NULL)
			text_at(cr, x + 6, y - 5, s->point_labels[i], 0);
	}
}

static void
draw_legend(cairo_t *cr, const struct chart *c)
{
	static const double dash[] = { 6, 4 };
	double x = W - RIGHT + 16, y = TOP + 8;
	size_t i;

	cairo_set_font_size(cr, 12);
	for (i = 0; i < c->nseries; i++, y += 20) {
		set_color(cr, c->series[i].color);
		cairo_set_line_width(cr, 2);
		cairo_set_dash(cr, dash, c->series[i].dashed ? 2 : 0, 0);
		if (!c->series[i].points_only) {
			cairo_move_to(cr, x, y);
			cairo_line_to(cr, x + 22, y);
			cairo_stroke(cr);
		}
		cairo_set_dash(cr, dash, 0, 0);
		draw_marker(cr, x + 11, y);
		cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
		text_at(cr, x + 30, y + 4, c->series[i].name, 0);
	}
}

static void
draw_rules(cairo_t *cr, const struct chart *c, const struct axis *ya)
{
	static const double dash[] = { 2, 3 };
	double pw = W - LEFT - RIGHT, ph = H - TOP - BOTTOM, y;
	size_t i;

	cairo_set_font_size(cr, 11);
	for (i = 0; i < c->nrules; i++) {
		y = TOP + ph * (1 - axis_pos(ya, c->rules[i].y));
		cairo_set_source_rgb(cr, 0.55, 0.1, 0.1);
		cairo_set_line_width(cr, 1.5);
		cairo_set_dash(cr, dash, 2, 0);
		cairo_move_to(cr, LEFT, y);
		cairo_line_to(cr, LEFT + pw, y);
		cairo_stroke(cr);
		cairo_set_dash(cr, dash, 0, 0);
		text_at(cr, LEFT + pw - 4, y - 4, c->rules[i].label, 1);
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

struct werr *
chart_svg(struct buf *out, const struct chart *c)
{
	struct axis xa = { 0, 0, 1, c->xlog2 }, ya = { 0, 0, 1, 0 };
	double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
	cairo_surface_t *surface;
	cairo_status_t st;
	cairo_t *cr;
	size_t i, j, from = out->len;

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
	axis_fit(&xa, xlo, xhi, c->xzero);
	axis_fit(&ya, ylo, yhi * 1.05, 1);
	surface = cairo_svg_surface_create_for_stream(write_buf, out, W, H);
	cr = cairo_create(surface);
	draw_frame(cr, c, &xa, &ya);
	draw_rules(cr, c, &ya);
	for (i = 0; i < c->nseries; i++)
		draw_series(cr, &c->series[i], &xa, &ya);
	draw_legend(cr, c);
	st = cairo_status(cr);
	cairo_destroy(cr);
	cairo_surface_finish(surface);
	if (st == CAIRO_STATUS_SUCCESS)
		st = cairo_surface_status(surface);
	cairo_surface_destroy(surface);
	if (st != CAIRO_STATUS_SUCCESS)
		return werr_new(WEXIT_ENV, "cairo: %s", cairo_status_to_string(st));
	renumber_surfaces(out, from);
	return NULL;
}

void
chart_release(void)
{
	cairo_debug_reset_static_data();
#ifdef HAVE_FONTCONFIG
	FcFini();
#endif
}
