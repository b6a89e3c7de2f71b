/*
 * join.c - which engines a run of `warden update` must take in so that a
 * policy group is not split: an engine that holds a group package the
 * run moves (or could move) joins the run, so that the package moves in
 * it too or in none (update.c plans, pins and rolls back the whole run).
 *
 * The engines that may join are those of every roster of the policy, not
 * only the default one: a group is one version of its package in every
 * engine warden manages, whichever roster a run or a cycle names. An
 * engine joins on its current manifest (an engine never updated has
 * nothing to split yet). Reads the store; never changes it; never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "manifest.h"
#include "store-update.h"
#include "update-private.h"
#include "util.h"

struct candidate {
	const char *name;
	json_t *current;
};

static int
in_run(const struct update_report *rep, const struct update_member *m,
    size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(m[i].name, name) == 0)
			return 1;
	for (i = 0; i < rep->n_joined; i++)
		if (strcmp(rep->joined[i].engine, name) == 0)
			return 1;
	return 0;
}

/* The engines of every roster outside the run, with their manifests. */
static struct werr *
candidates(struct candidate **out, size_t *n_out,
    const struct update_report *rep, const struct update_ctx *ctx,
    struct store *store, const struct update_member *m, size_t n)
{
	const struct policy *p = ctx->policy;
	struct candidate *c = NULL;
	struct werr *err = NULL;
	size_t r, e, k, nc = 0;
	const char *name;

	for (r = 0; r < p->n_rosters && err == NULL; r++) {
		for (e = 0; e < p->rosters[r].engines.n && err == NULL; e++) {
			name = p->rosters[r].engines.v[e];
			for (k = 0; k < nc && strcmp(c[k].name, name) != 0; k++)
				;
			if (k < nc || in_run(rep, m, n, name))
				continue;
			c = xrealloc(c, (nc + 1) * sizeof(*c));
			c[nc].name = name;
			err = store_update_current(store, name, &c[nc].current);
			nc++;
		}
	}
	*out = c;
	*n_out = nc;
	return err;
}

static void
join_add(struct update_report *rep, const char *engine, const char *group,
    const char *package, const char *held_by)
{
	struct update_join *j;

	rep->joined = xrealloc(rep->joined, (rep->n_joined + 1) *
	    sizeof(*rep->joined));
	j = &rep->joined[rep->n_joined++];
	j->engine = xstrdup(engine);
	j->group = xstrdup(group);
	j->package = xstrdup(package);
	j->held_by = xstrdup(held_by);
}

struct werr *
update_group_joins(struct update_report *rep, const struct update_ctx *ctx,
    struct store *store, const struct update_member *m, size_t n)
{
	const struct policy *p = ctx->policy;
	const struct policy_group *grp;
	struct candidate *c = NULL;
	const char *held_by;
	struct werr *err;
	size_t nc = 0, g, k, i;
	char *pkg;

	if (store == NULL || p->update.n_groups == 0)
		return NULL;
	if ((err = candidates(&c, &nc, rep, ctx, store, m, n)) != NULL)
		goto out;
	for (g = 0; g < p->update.n_groups; g++) {
		grp = &p->update.groups[g];
		for (k = 0; k < grp->packages.n; k++) {
			pkg = manifest_package_name(grp->packages.v[k]);
			held_by = NULL;
			for (i = 0; i < n && held_by == NULL; i++)
				if (manifest_package_version(m[i].current, pkg) != NULL ||
				    manifest_package_version(m[i].plan, pkg) != NULL)
					held_by = m[i].name;
			for (i = 0; i < nc && held_by != NULL; i++) {
				if (c[i].current == NULL ||
				    manifest_package_version(c[i].current, pkg) == NULL)
					continue;
				join_add(rep, c[i].name, grp->name,
				    grp->packages.v[k], held_by);
				json_decref(c[i].current);
				c[i].current = NULL;	/* joins once */
			}
			free(pkg);
		}
	}
out:
	for (i = 0; i < nc; i++)
		json_decref(c[i].current);
	free(c);
	return err;
}
