/*
 * plot.c - build the figures of a result set from its campaign documents.
 * See plot.h. Never prints.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "util.h"
#include "results/chart.h"
#include "results/plot.h"

#define GIB 1073741824.0

static double
num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* One line of a figure: an engine (on a machine) in one (model, split). */
struct line {
	char *name;
	int color;
	double *x, *y, *y2;		/* concurrency, metric(s) */
	char **labels;
	size_t n;
};

struct figure_set {
	struct plot_file *files;
	size_t n;
};

static void
add_file(struct figure_set *fs, const char *kind, const char *model,
    const char *split, const char *suffix, const char *title)
{
	struct plot_file *f;

	fs->files = xrealloc(fs->files, (fs->n + 1) * sizeof(*fs->files));
	f = &fs->files[fs->n++];
	f->name = xasprintf("plots/%s-%s-%s%s.svg", kind, model, split, suffix);
	f->title = xstrdup(title);
	f->model = xstrdup(model);
	f->split = xstrdup(split);
	buf_init(&f->svg);
	memset(&f->layout, 0, sizeof(f->layout));
}

static int
color_of(const json_t *engines, const char *engine)
{
	const json_t *v;
	size_t i;

	json_array_foreach(engines, i, v)
		if (strcmp(json_string_value(v), engine) == 0)
			return (int)i;
	return 0;
}

static int
cmp_result(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a,
	    "concurrency"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b,
	    "concurrency"));

	return x < y ? -1 : x > y;
}

static void
line_fill(struct line *l, const json_t *doc, int many_machines, int color)
{
	const json_t *arr = json_object_get(doc, "concurrency_results");
	const json_t **v;
	size_t i;

	l->n = json_array_size(arr);
	l->name = many_machines ? xasprintf("%s @%.8s",
	    jsonget_str(doc, "engine"), jsonget_str(doc,
	    "machine")) : xstrdup(jsonget_str(doc, "engine"));
	l->color = color;
	l->x = xcalloc(l->n + 1, sizeof(double));
	l->y = xcalloc(l->n + 1, sizeof(double));
	l->y2 = xcalloc(l->n + 1, sizeof(double));
	l->labels = xcalloc(l->n + 1, sizeof(char *));
	v = xcalloc(l->n + 1, sizeof(*v));
	for (i = 0; i < l->n; i++)
		v[i] = json_array_get(arr, i);
	qsort(v, l->n, sizeof(*v), cmp_result);
	for (i = 0; i < l->n; i++) {
		l->x[i] = (double)json_integer_value(json_object_get(v[i],
		    "concurrency"));
		l->labels[i] = xasprintf("c=%.0f", l->x[i]);
	}
	/* y and y2 are filled per figure from the sorted results */
	for (i = 0; i < l->n; i++)
		l->y[i] = l->y2[i] = NAN;
	free(v);
}

static void
line_free(struct line *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->labels[i]);
	free(l->labels);
	free(l->name);
	free(l->x);
	free(l->y);
	free(l->y2);
}

/* The sorted result of l's document at concurrency x. */
static const json_t *
result_at(const json_t *doc, double x)
{
	const json_t *c;
	size_t i;

	json_array_foreach(json_object_get(doc, "concurrency_results"), i, c)
		if ((double)json_integer_value(json_object_get(c,
		    "concurrency")) == x)
			return c;
	return NULL;
}

static struct werr *
figure_speed(struct figure_set *fs, struct line *lines, const json_t **docs,
    size_t nl, const char *model, const char *split)
{
	struct chart_series *s = xcalloc(2 * nl + 1, sizeof(*s));
	struct chart c;
	struct werr *err;
	char *title;
	size_t i, j;

	for (i = 0; i < nl; i++)
		for (j = 0; j < lines[i].n; j++) {
			const json_t *r = result_at(docs[i], lines[i].x[j]);
			const json_t *sum = json_object_get(r, "summary");

			lines[i].y[j] = num(sum, "output_throughput");
		}
	for (i = 0; i < nl; i++) {
		s[i].name = lines[i].name;
		s[i].x = lines[i].x;
		s[i].y = lines[i].y;
		s[i].n = lines[i].n;
		s[i].color = s[i].marker = s[i].dash = lines[i].color;
	}
	memset(&c, 0, sizeof(c));
	title = xasprintf("Output throughput, %s / %s", model, split);
	c.title = title;
	c.xlabel = "concurrency (requests in flight)";
	c.ylabel = "output throughput (tokens/s)";
	c.xlog2 = 1;
	c.series = s;
	c.nseries = nl;
	add_file(fs, "throughput", model, split, "", title);
	err = chart_svg(&fs->files[fs->n - 1].svg, &c,
	    &fs->files[fs->n - 1].layout);
	free(title);
	free(s);
	return err;
}

static struct werr *
figure_ttft(struct figure_set *fs, struct line *lines, const json_t **docs,
    size_t nl, const char *model, const char *split)
{
	struct chart_series *s = xcalloc(2 * nl + 1, sizeof(*s));
	char **names = xcalloc(2 * nl + 1, sizeof(*names));
	struct chart c;
	struct werr *err;
	char *title;
	size_t i, j;

	for (i = 0; i < nl; i++) {
		for (j = 0; j < lines[i].n; j++) {
			const json_t *sum = json_object_get(result_at(docs[i],
			    lines[i].x[j]), "summary");

			lines[i].y[j] = num(sum, "median_ttft_ms");
			lines[i].y2[j] = num(sum, "p99_ttft_ms");
		}
		names[2 * i] = xasprintf("%s p50", lines[i].name);
		names[2 * i + 1] = xasprintf("%s p99", lines[i].name);
		s[2 * i].name = names[2 * i];
		s[2 * i + 1].name = names[2 * i + 1];
		s[2 * i].x = s[2 * i + 1].x = lines[i].x;
		s[2 * i].y = lines[i].y;
		s[2 * i + 1].y = lines[i].y2;
		s[2 * i].n = s[2 * i + 1].n = lines[i].n;
		s[2 * i].color = s[2 * i + 1].color = lines[i].color;
		s[2 * i].marker = s[2 * i + 1].marker = lines[i].color;
		/* p50 and p99 of one engine, and of two engines, differ in
		 * dash or marker (chart.h) */
		s[2 * i].dash = 2 * lines[i].color;
		s[2 * i + 1].dash = 2 * lines[i].color + 1;
	}
	memset(&c, 0, sizeof(c));
	title = xasprintf("Time to first token, %s / %s", model, split);
	c.title = title;
	c.xlabel = "concurrency (requests in flight)";
	c.ylabel = "TTFT (ms)";
	c.xlog2 = 1;
	c.series = s;
	c.nseries = 2 * nl;
	add_file(fs, "ttft", model, split, "", title);
	err = chart_svg(&fs->files[fs->n - 1].svg, &c,
	    &fs->files[fs->n - 1].layout);
	for (i = 0; i < 2 * nl; i++)
		free(names[i]);
	free(names);
	free(title);
	free(s);
	return err;
}

/* json array of numbers into doubles (scaled); n set. */
static double *
numbers(const json_t *arr, double scale, size_t *n)
{
	double *v = xcalloc(json_array_size(arr) + 1, sizeof(double));
	const json_t *x;
	size_t i;

	json_array_foreach(arr, i, x)
		v[i] = json_is_number(x) ? json_number_value(x) / scale : NAN;
	*n = json_array_size(arr);
	return v;
}

/* The memory traces of every engine at one concurrency level: a
 * figure per level, since a level's sweeps last as long as they last. */
static struct werr *
figure_memory(struct figure_set *fs, struct line *lines, const json_t **docs,
    size_t nl, const char *model, const char *split, json_int_t level)
{
	struct chart_series *s = xcalloc(nl + 1, sizeof(*s));
	double **xs = xcalloc(nl + 1, sizeof(*xs));
	double **ys = xcalloc(nl + 1, sizeof(*ys));
	struct chart_rule rules[2];
	struct chart c;
	struct werr *err;
	char *title, *suffix, *ram = NULL, *hint = NULL;
	double ram_b = 0, hint_b = 0;
	size_t i, n, ns = 0, nrules = 0;

	for (i = 0; i < nl; i++) {
		const json_t *r = result_at(docs[i], (double)level);
		const json_t *tr = json_object_get(r, "memory_trace");

		if (r == NULL)
			continue;
		xs[ns] = numbers(json_object_get(tr, "t_s"), 1, &n);
		ys[ns] = numbers(json_object_get(tr, "system_used_bytes"), GIB,
		    &s[ns].n);
		if (n < s[ns].n)
			s[ns].n = n;
		s[ns].name = lines[i].name;
		s[ns].x = xs[ns];
		s[ns].y = ys[ns];
		s[ns].color = s[ns].marker = s[ns].dash = lines[i].color;
		ram_b = fmax(ram_b, num(r, "system_memory_bytes"));
		hint_b = fmax(hint_b, num(r, "gpu_working_set_hint_bytes"));
		ns++;
	}
	if (ram_b > 0) {
		ram = xasprintf("RAM %.1f GiB", ram_b / GIB);
		rules[nrules].y = ram_b / GIB;
		rules[nrules++].label = ram;
	}
	if (hint_b > 0) {
		hint = xasprintf("Metal working-set hint %.1f GiB", hint_b / GIB);
		rules[nrules].y = hint_b / GIB;
		rules[nrules++].label = hint;
	}
	memset(&c, 0, sizeof(c));
	title = xasprintf("System memory in use, %s / %s, c=%lld", model, split,
	    (long long)level);
	c.title = title;
	c.xlabel = "time since the sweep started (s)";
	c.ylabel = "system memory in use (GiB)";
	c.series = s;
	c.nseries = ns;
	c.rules = rules;
	c.nrules = nrules;
	suffix = xasprintf("-c%lld", (long long)level);
	add_file(fs, "memory", model, split, suffix, title);
	err = chart_svg(&fs->files[fs->n - 1].svg, &c,
	    &fs->files[fs->n - 1].layout);
	for (i = 0; i < ns; i++) {
		free(xs[i]);
		free(ys[i]);
	}
	free(xs);
	free(ys);
	free(ram);
	free(hint);
	free(suffix);
	free(title);
	free(s);
	return err;
}

static struct werr *
figure_speed_memory(struct figure_set *fs, struct line *lines,
    const json_t **docs, size_t nl, const char *model, const char *split)
{
	struct chart_series *s = xcalloc(nl + 1, sizeof(*s));
	struct chart c;
	struct werr *err;
	char *title;
	size_t i, j;

	for (i = 0; i < nl; i++) {
		for (j = 0; j < lines[i].n; j++) {
			const json_t *r = result_at(docs[i], lines[i].x[j]);

			lines[i].y[j] = num(json_object_get(r, "summary"),
			    "output_throughput");
			lines[i].y2[j] = num(r, "peak_system_memory_bytes") /
			    GIB;
		}
		s[i].name = lines[i].name;
		s[i].x = lines[i].y2;
		s[i].y = lines[i].y;
		s[i].n = lines[i].n;
		s[i].color = s[i].marker = s[i].dash = lines[i].color;
		s[i].points_only = 1;
		s[i].point_labels = (const char *const *)lines[i].labels;
	}
	memset(&c, 0, sizeof(c));
	title = xasprintf("Throughput against peak memory, %s / %s", model,
	    split);
	c.title = title;
	c.xlabel = "peak system memory (GiB)";
	c.xzero = 1;
	c.ylabel = "output throughput (tokens/s)";
	c.series = s;
	c.nseries = nl;
	add_file(fs, "throughput-memory", model, split, "", title);
	err = chart_svg(&fs->files[fs->n - 1].svg, &c,
	    &fs->files[fs->n - 1].layout);
	free(title);
	free(s);
	return err;
}

static int
cmp_level(const void *a, const void *b)
{
	json_int_t x = *(const json_int_t *)a, y = *(const json_int_t *)b;

	return x < y ? -1 : x > y;
}

/* The concurrency levels of a group's documents, ascending, each once. */
static size_t
group_levels(json_int_t **out, const json_t **docs, size_t nd)
{
	json_int_t *v = NULL, c;
	const json_t *r;
	size_t i, j, k, n = 0;

	for (i = 0; i < nd; i++)
		json_array_foreach(json_object_get(docs[i],
		    "concurrency_results"), j, r) {
			c = jsonget_int(r, "concurrency");
			for (k = 0; k < n && v[k] != c; k++)
				;
			if (k < n)
				continue;
			v = xrealloc(v, (n + 1) * sizeof(*v));
			v[n++] = c;
		}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_level);
	*out = v;
	return n;
}

/* Engines in name order: the colour (and marker) of each. */
static json_t *
engine_names(const json_t *docs)
{
	json_t *seen = json_object(), *out = json_array(), *v;
	const json_t *doc;
	const char **names, *k;
	size_t i, n = 0;

	json_array_foreach(docs, i, doc)
		json_object_set_new(seen, jsonget_str(doc, "engine"),
		    json_true());
	names = xcalloc(json_object_size(seen) + 1, sizeof(*names));
	json_object_foreach(seen, k, v)
		names[n++] = k;
	qsort(names, n, sizeof(*names), strcmp_ptr);
	for (i = 0; i < n; i++)
		json_array_append_new(out, json_string(names[i]));
	free(names);
	json_decref(seen);
	return out;
}

static int
many_machines(const json_t *docs)
{
	const json_t *doc;
	size_t i;

	json_array_foreach(docs, i, doc)
		if (strcmp(jsonget_str(doc, "machine"),
		    jsonget_str(json_array_get(docs, 0), "machine")) != 0)
			return 1;
	return 0;
}

struct werr *
plot_results(struct plot_file **out, size_t *nout, const struct resultset *rs)
{
	json_t *docs = resultset_docs(rs, "campaign"), *engines, *doc;
	struct figure_set fs = { NULL, 0 };
	struct werr *err = NULL;
	const json_t **group;
	struct line *lines;
	json_int_t *levels;
	size_t i, j, k, ng, nlevels;
	int many = many_machines(docs);

	engines = engine_names(docs);
	group = xcalloc(json_array_size(docs) + 1, sizeof(*group));
	lines = xcalloc(json_array_size(docs) + 1, sizeof(*lines));
	/* documents come in path order: results/MODEL/SPLIT/..., so each
	 * (model, split) is a run of consecutive documents */
	for (i = 0; i < json_array_size(docs) && err == NULL; i = j) {
		doc = json_array_get(docs, i);
		ng = 0;
		for (j = i; j < json_array_size(docs); j++) {
			const json_t *d = json_array_get(docs, j);

			if (strcmp(jsonget_str(d, "model"),
			    jsonget_str(doc, "model")) ||
			    strcmp(jsonget_str(d, "split"),
			    jsonget_str(doc, "split")))
				break;
			group[ng] = d;
			line_fill(&lines[ng], d, many, color_of(engines,
			    jsonget_str(d, "engine")));
			ng++;
		}
		nlevels = group_levels(&levels, group, ng);
		err = figure_speed(&fs, lines, group, ng,
		    jsonget_str(doc, "model"), jsonget_str(doc, "split"));
		if (err == NULL)
			err = figure_ttft(&fs, lines, group, ng,
			    jsonget_str(doc, "model"),
			    jsonget_str(doc, "split"));
		for (k = 0; err == NULL && k < nlevels; k++)
			err = figure_memory(&fs, lines, group, ng,
			    jsonget_str(doc, "model"),
			    jsonget_str(doc, "split"), levels[k]);
		if (err == NULL)
			err = figure_speed_memory(&fs, lines, group, ng,
			    jsonget_str(doc, "model"),
			    jsonget_str(doc, "split"));
		for (k = 0; k < ng; k++)
			line_free(&lines[k]);
		free(levels);
	}
	free(group);
	free(lines);
	json_decref(engines);
	json_decref(docs);
	chart_release();
	if (err != NULL) {
		plot_files_free(fs.files, fs.n);
		return err;
	}
	*out = fs.files;
	*nout = fs.n;
	return NULL;
}

void
plot_files_free(struct plot_file *files, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(files[i].name);
		free(files[i].title);
		free(files[i].model);
		free(files[i].split);
		buf_free(&files[i].svg);
		chart_layout_free(&files[i].layout);
	}
	free(files);
}
