/*
 * fidelity-cell.c - one cell of the fidelity task: its requests built
 * from the task's messages, asked through the load generator of the
 * running engine, every answer kept, parsed and scored, and stored with
 * every item's prediction. See fidelity.h; the walk is fidelity.c.
 *
 * Every item gets a prediction: an answer never received is `failed`,
 * never dropped. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "campaign-input.h"
#include "util.h"
#include "results/fidelity-private.h"
#include "results/fidelity-score.h"
#include "results/store-results.h"

void
fidelity_emit(struct frun *r, size_t k, const struct cell *c, const char *phase,
    size_t done, size_t ok, const char *outcome, double f1)
{
	struct fidelity_progress p;

	if (r->o->on_progress == NULL)
		return;
	memset(&p, 0, sizeof(p));
	p.cell = k + 1;
	p.cells = r->ncells;
	p.engine = c->engine;
	p.model = c->model;
	p.shots = c->shots;
	p.phase = phase;
	p.done = done;
	p.ok = ok;
	p.total = r->nitems;
	p.outcome = outcome;
	p.weighted_f1 = f1;
	p.elapsed_s = (double)(mono_ns() - r->t0) / 1e9;
	r->o->on_progress(r->o->arg, &p);
}

static enum loadgen_tick_action
cell_tick(void *arg, const struct loadgen_progress *lp)
{
	struct answers *a = arg;
	uint64_t quiet_bytes;

	if (!engine_alive(a->eng))
		return LOADGEN_TICK_SERVER_CRASH;
	if (a->hang_ns != 0 && lp->in_flight > 0) {
		quiet_bytes = lp->now_ns > lp->last_byte_ns ?
		    lp->now_ns - lp->last_byte_ns : 0;
		if (quiet_bytes >= a->hang_ns &&
		    engine_log_quiet_ns(a->eng, lp->now_ns) >= a->hang_ns)
			return LOADGEN_TICK_HANG;
	}
	fidelity_emit(a->r, a->k, a->c, "asking", lp->done, lp->ok, NULL, 0);
	return LOADGEN_TICK_CONTINUE;
}

static void
cell_record(void *arg, const struct loadgen_record *rec)
{
	struct answers *a = arg;
	size_t i = rec->index;

	if (rec->warmup || i >= a->r->nitems)
		return;
	a->seen[i] = 1;
	a->outcome[i] = loadgen_outcome_name(rec->outcome);
	if (rec->outcome == LOADGEN_OK)
		a->answer[i] = xstrndup(rec->content ? rec->content : "",
		    rec->content_len);
	else
		a->error[i] = xstrdup(rec->error ? rec->error : "failed");
}

json_t *
fidelity_cell_provenance(const struct frun *r, const struct fwalk *w)
{
	return json_pack("{s:o, s:o, s:s, s:n, s:n}",
	    "adapter_sha256", provenance_repo_digest(r->o->repo_root,
	    w->adapter ? w->adapter->path : NULL),
	    "profile_sha256", provenance_repo_digest(r->o->repo_root,
	    w->profile ? w->profile->path : NULL),
	    "task_sha256", r->o->task->digest,
	    "engine_argv",
	    /* the update step's version manifest, once it records one */
	    "engine_manifest");
}

/* Parse, score and store a cell; items without an answer are failed. */
struct werr *
fidelity_cell_finish(struct frun *r, int64_t cell_id, struct answers *a,
    const char *outcome, const char *detail, const struct engine *eng)
{
	const struct fidelity_task *t = r->o->task;
	struct store_fidelity_prediction *preds;
	struct store_fidelity_cell_result res;
	enum fidelity_parse *how;
	struct werr *err;
	int *gold, *pred;
	size_t i;

	preds = xcalloc(r->nitems + 1, sizeof(*preds));
	how = xcalloc(r->nitems + 1, sizeof(*how));
	gold = xcalloc(r->nitems + 1, sizeof(*gold));
	pred = xcalloc(r->nitems + 1, sizeof(*pred));
	for (i = 0; i < r->nitems; i++) {
		gold[i] = fidelity_task_label_index(t, t->items[i].label);
		if (a->answer[i] != NULL)
			pred[i] = fidelity_parse_answer(&how[i],
			    (const char *const *)t->labels, t->nlabels,
			    a->answer[i], strlen(a->answer[i]));
		else {
			pred[i] = -1;
			how[i] = FIDELITY_FAILED;
		}
		preds[i].item_id = t->items[i].id;
		preds[i].gold = t->items[i].label;
		preds[i].predicted = pred[i] >= 0 ? t->labels[pred[i]] : "none";
		preds[i].parse = fidelity_parse_name(how[i]);
		preds[i].outcome = a->seen[i] ? a->outcome[i] : "not_run";
		preds[i].answer = a->answer[i];
		preds[i].error = a->error[i] != NULL ? a->error[i] :
		    a->seen[i] ? NULL : detail != NULL ? detail : outcome;
	}
	memset(&res, 0, sizeof(res));
	res.outcome = outcome;
	res.detail = detail;
	res.served_model = eng != NULL ? eng->served_model : NULL;
	res.engine_argv = eng != NULL ? eng->argv_provenance : NULL;
	res.scores = fidelity_cell_scores((const char *const *)t->labels,
	    t->nlabels, gold, pred, how, r->nitems);
	res.predictions = preds;
	res.n = r->nitems;
	err = store_fidelity_cell_finish(r->o->store, cell_id, &res);
	/* a cell that did not complete has no figure (as in the table) */
	fidelity_emit(r, a->k, a->c, "done", r->nitems, r->nitems - (size_t)
	    json_integer_value(json_object_get(res.scores, "request_failures")),
	    outcome, strcmp(outcome, "complete") == 0 ?
	    json_number_value(json_object_get(res.scores, "weighted_f1")) : -1);
	json_decref(res.scores);
	free(preds);
	free(how);
	free(gold);
	free(pred);
	return err;
}

void
fidelity_answers_init(struct answers *a, struct frun *r, size_t k)
{
	memset(a, 0, sizeof(*a));
	a->r = r;
	a->k = k;
	a->c = &r->cells[k];
	a->seen = xcalloc(r->nitems + 1, sizeof(*a->seen));
	a->answer = xcalloc(r->nitems + 1, sizeof(*a->answer));
	a->error = xcalloc(r->nitems + 1, sizeof(*a->error));
	a->outcome = xcalloc(r->nitems + 1, sizeof(*a->outcome));
	a->hang_ns = (uint64_t)(r->o->policy->caps.hang_s * 1e9);
}

void
fidelity_answers_free(struct answers *a)
{
	size_t i;

	for (i = 0; i < a->r->nitems; i++) {
		free(a->answer[i]);
		free(a->error[i]);
	}
	free(a->seen);
	free(a->answer);
	free(a->error);
	free(a->outcome);
}

/* The requests of a cell: the task's messages as workload lines, built
 * into bodies the way the campaign builds them. */
static void
cell_bodies(struct bodies *b, struct frun *r, const struct cell *c,
    const struct profile *p)
{
	const struct profile_engine *pe = profile_engine(p, c->engine);
	struct workload wl;
	size_t i;

	memset(&wl, 0, sizeof(wl));
	wl.split = (char *)"fidelity";
	wl.ntimed = r->nitems;
	wl.timed = xcalloc(r->nitems + 1, sizeof(*wl.timed));
	for (i = 0; i < r->nitems; i++)
		wl.timed[i] = json_pack("{s:s, s:o, s:i}", "id",
		    r->o->task->items[i].id, "messages",
		    fidelity_task_messages(r->o->task, i, (size_t)c->shots),
		    "max_tokens", r->o->task->max_tokens);
	bodies_build(b, &wl, 0, 0, pe && pe->model ? pe->model : p->name, p, 0);
	/* the ids point into the task, which outlives the bodies */
	for (i = 0; i < r->nitems; i++) {
		b->timed_ids[i] = r->o->task->items[i].id;
		json_decref(wl.timed[i]);
	}
	free(wl.timed);
}

struct werr *
fidelity_cell_ask(struct frun *r, struct fwalk *w, struct answers *a,
    enum loadgen_end *end)
{
	const struct policy *pol = r->o->policy;
	struct loadgen_config cfg;
	struct loadgen_summary sum;
	struct bodies b;
	struct werr *err;
	char *url = xasprintf("%s/v1/chat/completions", w->eng->base_url);
	char *prefix = xasprintf("%s-f%zu-", r->run_id, a->k);

	cell_bodies(&b, r, a->c, w->profile);
	memset(&cfg, 0, sizeof(cfg));
	cfg.url = url;
	cfg.request_id_prefix = prefix;
	cfg.bodies = b.timed;
	cfg.nbodies = b.ntimed;
	cfg.concurrency = r->concurrency;
	cfg.request_timeout_ns = (uint64_t)(pol->caps.request_timeout_s * 1e9);
	cfg.deadline_ns = w->deadline;
	cfg.tick_ms = 100;
	cfg.keep_content = ANSWER_KEEP;
	cfg.on_tick = cell_tick;
	cfg.on_record = cell_record;
	cfg.arg = a;
	a->eng = w->eng;
	err = loadgen_run(&cfg, &sum);
	*end = sum.end;
	bodies_free(&b);
	free(prefix);
	free(url);
	return err;
}

const char *
fidelity_end_outcome(enum loadgen_end end)
{
	switch (end) {
	case LOADGEN_END_COMPLETE:
		return "complete";
	case LOADGEN_END_HANG:
		return "hang";
	case LOADGEN_END_DEADLINE:
		return "engine_cap";
	case LOADGEN_END_SERVER_CRASH:
		return "server_crash";
	default:
		return "unknown";
	}
}

