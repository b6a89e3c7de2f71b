/*
 * campaign-walk.c - the walk over the grid for campaign.c: per point,
 * decide whether it runs (already recorded; the rest of an engine's block
 * skipped after an adapter error, a failed start or the engine's wall
 * cap; a profile that is missing, names no model for the engine or says
 * it does not serve it; a model the engine would not serve) and have
 * campaign-sweep.c record the skip or run the sweep. It carries what one
 * point leaves the next (struct walk).
 *
 * Must never start an engine or measure (campaign-sweep.c does), and
 * never turn an engine failure into an error. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "campaign-private.h"
#include "engine.h"
#include "store-campaign.h"
#include "util.h"

void
campaign_walk_skip(struct walk *w, const char *outcome, const char *detail)
{
	const char *nl = detail ? strchr(detail, ';') : NULL;

	free(w->skip_outcome);
	free(w->skip_detail);
	w->skip_outcome = xstrdup(outcome);
	w->skip_detail = nl ? xasprintf("not run: %.*s", (int)(nl - detail),
	    detail) : xasprintf("not run: %s", detail ? detail : outcome);
}

/* Load what a new engine's block of the grid needs, and its wall cap. */
static void
walk_engine(struct walk *w, const struct run *r, const struct point *pt)
{
	engine_free(w->kept);
	w->kept = NULL;
	adapter_free(w->adapter);
	w->adapter = NULL;
	profile_free(w->profile);
	w->profile = NULL;
	free(w->skip_outcome);
	free(w->skip_detail);
	free(w->skip_model);
	free(w->skip_model_detail);
	w->skip_outcome = w->skip_detail = NULL;
	w->skip_model = w->skip_model_detail = NULL;
	werr_free(w->adapter_err);
	w->adapter_err = adapter_load_named(&w->adapter, r->tree,
	    pt->engine);
	w->engine = pt->engine;
	/* The cap counts what this engine already ran in this run, so a
	 * resumed run cannot give an engine a fresh hour. */
	{
		double spent = 0, left;
		struct werr *e = store_campaign_engine_seconds(r->o->store,
		    r->run_id, pt->engine, &spent);

		werr_free(e);	/* unknown: count from zero, as before */
		left = r->o->policy->caps.engine_wall_s - spent;
		w->deadline = mono_ns() + (uint64_t)(left > 0 ? left * 1e9 : 0);
	}
	if (w->adapter_err != NULL)
		campaign_walk_skip(w, "adapter_error", w->adapter_err->msg);
}

struct werr *
campaign_walk_point(struct run *r, struct walk *w, size_t i)
{
	const struct point *pt = &r->points[i];
	const struct profile_engine *pe;
	struct werr *err;
	char *detail;
	int done;

	if ((err = store_campaign_sweep_done(r->o->store, r->run_id, (int)i,
	    &done)) != NULL || done)
		return err;
	if (w->engine == NULL || strcmp(w->engine, pt->engine) != 0)
		walk_engine(w, r, pt);
	if (w->skip_outcome != NULL)
		return campaign_sweep_skip(r, w, i, w->skip_outcome, w->skip_detail);
	if (w->profile == NULL || strcmp(w->profile->name, pt->model) != 0) {
		profile_free(w->profile);
		w->profile = NULL;
		if ((err = profile_load_named(&w->profile, r->tree,
		    pt->model)) != NULL) {
			detail = xasprintf("model '%s': %s", pt->model, err->msg);
			werr_free(err);
			err = campaign_sweep_skip(r, w, i, "profile_error", detail);
			free(detail);
			return err;
		}
	}
	if (w->skip_model != NULL && strcmp(w->skip_model, pt->model) == 0)
		return campaign_sweep_skip(r, w, i, "wrong_model", w->skip_model_detail);
	if ((pe = profile_engine(w->profile, pt->engine)) == NULL) {
		detail = xasprintf("profile '%s' names no model for engine '%s'",
		    pt->model, pt->engine);
		err = campaign_sweep_skip(r, w, i, "unsupported", detail);
		free(detail);
		return err;
	}
	/* The profile says this engine does not serve the model: no speed
	 * result, the reason recorded. */
	if (pe->unsupported != NULL) {
		detail = xasprintf("profile '%s': engine '%s' does not serve "
		    "this model: %s", pt->model, pt->engine, pe->unsupported);
		err = campaign_sweep_skip(r, w, i, "skipped", detail);
		free(detail);
		return err;
	}
	if (mono_ns() >= w->deadline) {
		campaign_walk_skip(w, "engine_cap", "the engine wall cap was reached");
		return campaign_sweep_skip(r, w, i, w->skip_outcome, w->skip_detail);
	}
	return campaign_sweep_run(r, w, i);
}

void
campaign_walk_free(struct walk *w)
{
	engine_free(w->kept);
	adapter_free(w->adapter);
	profile_free(w->profile);
	free(w->skip_outcome);
	free(w->skip_detail);
	free(w->skip_model);
	free(w->skip_model_detail);
	werr_free(w->adapter_err);
}
