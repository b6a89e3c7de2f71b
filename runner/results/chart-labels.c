/*
 * chart-labels.c - the labels of a chart placed greedily so that no two
 * overlap and none covers a marker where another place is free: point
 * labels, and the rules with theirs. See chart-private.h. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <cairo.h>

#include "util.h"
#include "results/chart-private.h"

void
chart_boxes_add(struct boxes *b, double x, double y, double w, double h)
{
	b->v = xrealloc(b->v, (b->n + 1) * sizeof(*b->v));
	b->v[b->n].x = x;
	b->v[b->n].y = y;
	b->v[b->n].w = w;
	b->v[b->n].h = h;
	b->n++;
}

int
chart_boxes_overlap(const struct chart_box *a, const struct chart_box *b)
{
	return a->x < b->x + b->w && b->x < a->x + a->w &&
	    a->y < b->y + b->h && b->y < a->y + a->h;
}

static int
boxes_hit(const struct boxes *b, const struct chart_box *box)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		if (chart_boxes_overlap(&b->v[i], box))
			return 1;
	return 0;
}

void
chart_layout_label(struct chart_layout *l, const char *text, int kind,
    const struct chart_box *box)
{
	if (l == NULL)
		return;
	l->labels = xrealloc(l->labels, (l->nlabels + 1) * sizeof(*l->labels));
	l->labels[l->nlabels].text = xstrdup(text);
	l->labels[l->nlabels].kind = kind;
	l->labels[l->nlabels].box = *box;
	l->nlabels++;
}

/*
 * Draw text in the first of the n candidate boxes (w wide, one line
 * high; x and y their top-left corners) that stays in the plot, meets no
 * placed label and covers no marker; failing that, the first that meets
 * no placed label. Returns 0 when none fits (nothing drawn).
 */
static int
place_label(cairo_t *cr, struct boxes *placed, const struct boxes *markers,
    const struct plot_area *pa, const char *text, const struct chart_box *cand,
    size_t n, struct chart_box *out)
{
	cairo_font_extents_t fe;
	const struct chart_box *box;
	size_t i;
	int pass;

	cairo_font_extents(cr, &fe);
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++) {
			box = &cand[i];
			if (box->x < LEFT + 1 ||
			    box->x + box->w > LEFT + pa->pw - 1 ||
			    box->y < TOP + 1 ||
			    box->y + box->h > TOP + pa->ph - 1 ||
			    boxes_hit(placed, box) ||
			    (pass == 0 && boxes_hit(markers, box)))
				continue;
			cairo_move_to(cr, box->x, box->y + fe.ascent);
			cairo_show_text(cr, text);
			chart_boxes_add(placed, box->x, box->y, box->w, box->h);
			*out = *box;
			return 1;
		}
	return 0;
}

/* Candidate boxes for a label w by h at a point (x, y), nearest first:
 * right and left of it, above and below, then two rings further out. */
#define POINT_CANDIDATES 20
static void
point_candidates(struct chart_box *c, double x, double y, double w, double h)
{
	const double g = MARKER_R + 2;
	const double right = x + g, left = x - g - w, mid = x - w / 2;
	size_t n = 0, ring;

	for (ring = 0; ring < 3; ring++) {
		double up = y - h - 1 - (double)ring * (h + 1);
		double down = y + 1 + (double)ring * (h + 1);

		c[n++] = (struct chart_box){ right, up, w, h };
		c[n++] = (struct chart_box){ right, down, w, h };
		c[n++] = (struct chart_box){ left, up, w, h };
		c[n++] = (struct chart_box){ left, down, w, h };
		c[n++] = (struct chart_box){ mid, up - g, w, h };
		c[n++] = (struct chart_box){ mid, down + g, w, h };
	}
	c[n++] = (struct chart_box){ right, y - h / 2, w, h };
	c[n++] = (struct chart_box){ left, y - h / 2, w, h };
}

size_t
chart_draw_point_labels(cairo_t *cr, const struct chart *c,
    const struct plot_area *pa, struct boxes *placed,
    const struct boxes *markers, struct chart_layout *layout)
{
	struct chart_box cand[POINT_CANDIDATES], box;
	cairo_text_extents_t ext;
	cairo_font_extents_t fe;
	size_t i, k, dropped = 0;
	double x, y;

	cairo_set_font_size(cr, 10);
	cairo_font_extents(cr, &fe);
	for (k = 0; k < c->nseries; k++) {
		const struct chart_series *s = &c->series[k];

		for (i = 0; s->point_labels != NULL && i < s->n; i++) {
			if (s->point_labels[i] == NULL ||
			    !chart_point_at(pa, s, i, &x, &y))
				continue;
			cairo_text_extents(cr, s->point_labels[i], &ext);
			point_candidates(cand, x, y, ext.x_advance,
			    fe.ascent + fe.descent);
			chart_set_color(cr, s->color);
			if (place_label(cr, placed, markers, pa,
			    s->point_labels[i], cand, POINT_CANDIDATES, &box))
				chart_layout_label(layout, s->point_labels[i],
				    CHART_LABEL_POINT, &box);
			else
				dropped++;
		}
	}
	return dropped;
}

/* Draw the rules; each label above its rule at the right end, or below
 * it, or at the left end, or in the middle: the first that fits. */
size_t
chart_draw_rules(cairo_t *cr, const struct chart *c, const struct plot_area *pa,
    struct boxes *placed, const struct boxes *markers,
    struct chart_layout *layout)
{
	static const double dash[] = { 2, 3 };
	struct chart_box cand[6], box;
	cairo_text_extents_t ext;
	cairo_font_extents_t fe;
	size_t i, dropped = 0;
	double y, w, h, xs[3];

	cairo_set_font_size(cr, 11);
	cairo_font_extents(cr, &fe);
	h = fe.ascent + fe.descent;
	for (i = 0; i < c->nrules; i++) {
		y = TOP + pa->ph * (1 - chart_axis_pos(&pa->ya, c->rules[i].y));
		cairo_set_source_rgb(cr, 0.55, 0.1, 0.1);
		cairo_set_line_width(cr, 1.5);
		cairo_set_dash(cr, dash, 2, 0);
		cairo_move_to(cr, LEFT, y);
		cairo_line_to(cr, LEFT + pa->pw, y);
		cairo_stroke(cr);
		cairo_set_dash(cr, NULL, 0, 0);
		cairo_text_extents(cr, c->rules[i].label, &ext);
		w = ext.x_advance;
		xs[0] = LEFT + pa->pw - 4 - w;
		xs[1] = LEFT + 4;
		xs[2] = LEFT + pa->pw / 2 - w / 2;
		cand[0] = (struct chart_box){ xs[0], y - h - 1, w, h };
		cand[1] = (struct chart_box){ xs[0], y + 2, w, h };
		cand[2] = (struct chart_box){ xs[1], y - h - 1, w, h };
		cand[3] = (struct chart_box){ xs[1], y + 2, w, h };
		cand[4] = (struct chart_box){ xs[2], y - h - 1, w, h };
		cand[5] = (struct chart_box){ xs[2], y + 2, w, h };
		if (place_label(cr, placed, markers, pa, c->rules[i].label,
		    cand, 6, &box))
			chart_layout_label(layout, c->rules[i].label,
			    CHART_LABEL_RULE, &box);
		else
			dropped++;
	}
	return dropped;
}

void
chart_marker_boxes(struct boxes *b, const struct chart *c,
    const struct plot_area *pa)
{
	const double r = MARKER_R * 1.2;
	size_t i, k, step;
	double x, y;

	for (k = 0; k < c->nseries; k++) {
		step = chart_marker_step(&c->series[k]);
		for (i = 0; i < c->series[k].n; i += step)
			if (chart_point_at(pa, &c->series[k], i, &x, &y))
				chart_boxes_add(b, x - r, y - r, 2 * r, 2 * r);
	}
}
