/*
 * guard.c - what an agent run is checked against once the agent (or its
 * smoke campaign) has gone: the repository by the sandbox guard's
 * snapshot, the store by its content. See agent-private.h. Never prints.
 */
#include "config.h"

#include <string.h>

#include "agent-private.h"
#include "journal.h"
#include "store.h"
#include "util.h"

struct head_seen {
	const struct agent_store_head *head;
	int same;
};

/* Is the entry at the old head's seq still the one that had its hash?
 * (journal_each reads from that seq on: it and what came since.) */
static struct werr *
head_still(void *arg, const struct journal_entry *e)
{
	struct head_seen *h = arg;

	if (e->seq == h->head->seq && e->hash != NULL &&
	    strcmp(e->hash, h->head->hash) == 0)
		h->same = 1;
	return NULL;
}

/*
 * The store, by its content: its files are warden's (a reader of the
 * maintainer's changes their metadata, a writer their bytes), so the
 * guard compares what they hold that matters instead. The journal's
 * chain must still verify, and the entry that was its head before the
 * run must still be there unchanged: appending is a maintainer's right
 * while a run is in flight; rewriting is not.
 */
static struct werr *
store_check(struct store *store, const struct agent_store_head *head,
    json_t *reasons)
{
	struct journal_filter f = { NULL, NULL, NULL, 0 };
	struct head_seen h = { head, 0 };
	struct werr *err;
	int64_t broken = 0, count = 0;
	char *why = NULL;

	if ((err = journal_verify(store, &broken, &why, &count)) != NULL)
		return err;
	if (broken != 0) {
		json_array_append_new(reasons, json_sprintf("the journal's "
		    "chain is broken at entry %lld: %s", (long long)broken,
		    why != NULL ? why : "?"));
		free(why);
		return NULL;
	}
	free(why);
	if (head->seq == 0)
		return NULL;
	f.after_seq = head->seq - 1;
	if ((err = journal_each(store, &f, head_still, &h)) != NULL)
		return err;
	if (!h.same)
		json_array_append_new(reasons, json_sprintf("the journal's "
		    "entry %lld was rewritten", (long long)head->seq));
	return NULL;
}

struct werr *
agent_settle(json_t *rec, const struct sandbox_guard *guard,
    git_repository *repo, struct store *store,
    const struct agent_store_head *head, const char **state, int *changed)
{
	json_t *reasons = json_array(), *back = json_array();
	struct werr *err = sandbox_guard_settle(reasons, back, guard, repo);

	if (err == NULL)
		err = store_check(store, head, reasons);

	*changed = json_array_size(reasons) > 0;
	if (*changed) {
		json_object_set(rec, "reasons", reasons);
		json_object_set(rec, "restored", back);
		*state = "quarantined";
	}
	json_decref(reasons);
	json_decref(back);
	return err;
}

/* What the guard leaves out for an agent run: the run's own places and
 * the store's files (warden's: its readers and writers change them while
 * the agent runs; store_check() compares their content instead). */
struct werr *
agent_guard_snapshot(struct sandbox_guard **out, git_repository *repo,
    const char *repo_root, const struct agent_paths *p, struct store *store,
    struct agent_store_head *head)
{
	static const char *const store_files[] = { "warden.lock", "warden.db",
	    "warden.db-wal", "warden.db-shm", "warden.db-journal" };
	const char *common = git_repository_commondir(repo);
	char *exclude[3 + sizeof(store_files) / sizeof(store_files[0]) + 1];
	char *gitfile = path_join(p->worktree, ".git");
	struct werr *err;
	size_t i, n = 0;

	if ((err = journal_head(store, &head->seq, head->hash)) != NULL) {
		free(gitfile);
		return err;
	}
	exclude[n++] = xstrdup(p->run_dir);
	exclude[n++] = xstrdup(p->worktree);
	exclude[n++] = xasprintf("%s%sworktrees/%s/index", common,
	    str_endswith(common, "/") ? "" : "/", p->wt_name);
	for (i = 0; i < sizeof(store_files) / sizeof(store_files[0]); i++)
		exclude[n++] = xasprintf("%s/.warden/%s", repo_root,
		    store_files[i]);
	exclude[n] = NULL;
	err = sandbox_guard_snapshot(out, repo, repo_root,
	    gitfile, exclude);
	for (i = 0; i < n; i++)
		free(exclude[i]);
	free(gitfile);
	return err;
}
