/*
 * run.c - one agent run from start to record: the trusted base and its
 * policy, the sandbox decision, the row, the worktree, the launch, the
 * guard, the gate, the queue and the smoke campaign. See agent.h.
 *
 * The run trusts only what it checks after the agent has gone: the
 * guard's comparison and the worktree's diff through the gate. Policy
 * comes from the official branch's tree, never from a working tree or the
 * worktree. A row exists before the worktree and its branch do, so a kill
 * at any point leaves a record naming them. Never prints.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent-private.h"
#include "fault.h"
#include "journal.h"
#include "review.h"
#include "review-smoke.h"
#include "store.h"
#include "store-agent.h"
#include "util.h"

#define AGENT_AUTHOR "maintainer agent <agent@warden.invalid>"

struct run {
	const struct agent_run_opts *o;
	struct review_base base;
	const struct policy *pol;	/* base.policy: the trusted one */
	struct agent_paths p;
	json_t *rec;			/* the record */
	char *instructions;
	size_t ilen;
	const char *sandbox_kind;	/* NULL: none in force */
	int64_t review_id;
	struct agent_store_head head;	/* the journal's head before the
					   agent ran (see agent_settle) */
};

static void
progress(const struct run *r, const char *what)
{
	if (r->o->on_progress != NULL)
		r->o->on_progress(r->o->arg, what);
}

static struct werr *
read_instructions(struct run *r, git_repository *repo)
{
	const char *path = r->pol->agent.instructions;
	git_tree *tree = NULL;
	git_tree_entry *te = NULL;
	git_blob *blob = NULL;
	struct werr *err = NULL;

	if (path == NULL)
		return NULL;
	if (git_tree_lookup(&tree, repo, &r->base.tree) < 0 ||
	    git_tree_entry_bypath(&te, tree, path) < 0 ||
	    git_tree_entry_type(te) != GIT_OBJECT_BLOB ||
	    git_blob_lookup(&blob, repo, git_tree_entry_id(te)) < 0) {
		err = werr_new(WEXIT_INPUT, "policy/warden.json: "
		    "'agent.instructions' names '%s', which the official "
		    "branch's tree does not have", path);
		goto out;
	}
	r->ilen = (size_t)git_blob_rawsize(blob);
	r->instructions = xstrndup(git_blob_rawcontent(blob), r->ilen);
out:
	git_blob_free(blob);
	git_tree_entry_free(te);
	git_tree_free(tree);
	return err;
}

/* Which sandbox will be in force, and which network rule; an error when
 * policy requires a sandbox (or a network rule) and there is none. */
static struct werr *
decide_sandbox(struct run *r)
{
	const char *mode = r->pol->agent.sandbox;
	const char *net = r->pol->agent.network;
	struct sandbox_caps caps;
	struct werr *err;
	json_t *sb = json_pack("{s:s, s:s}", "mode", mode, "network", net);

	json_object_set_new(r->rec, "sandbox", sb);
	if (strcmp(mode, "off") == 0) {
		json_object_set_new(sb, "in_force", json_string("off"));
		json_object_set_new(sb, "network_in_force", json_string("host"));
		return NULL;
	}
	if ((err = sandbox_probe(&caps)) == NULL &&
	    strcmp(net, "https") == 0 && !caps.net_https)
		err = werr_new(WEXIT_ENV, "the network rule \"https\" "
		    "cannot be kept here (it needs Landlock 4, Linux 6.7); "
		    "set 'agent.network' to \"host\" or \"none\"");
	if (err == NULL) {
		r->sandbox_kind = caps.kind;
		json_object_set_new(sb, "in_force", json_string(caps.kind));
		json_object_set_new(sb, "network_in_force", json_string(net));
		json_object_set_new(sb, "scoped", json_boolean(caps.scoped));
		return NULL;
	}
	json_object_set_new(sb, "in_force", json_string("none"));
	json_object_set_new(sb, "network_in_force", json_string("host"));
	json_object_set_new(sb, "why", json_string(err->msg));
	if (strcmp(mode, "required") == 0)
		return werr_wrap(err, "policy requires a sandbox for the "
		    "agent ('agent.sandbox' is \"required\")");
	werr_free(err);
	return NULL;
}

static const char *
sandbox_in_force(const struct run *r)
{
	return json_string_value(json_object_get(json_object_get(r->rec,
	    "sandbox"), "in_force"));
}

/* The record as the journal keeps it: all but the problem's text. */
static json_t *
journal_body(const struct run *r)
{
	json_t *b = json_deep_copy(r->rec);

	json_object_del(json_object_get(b, "task"), "problem");
	return b;
}

static struct werr *
record_start(struct run *r, const char *state)
{
	struct store_agent_new row;
	struct store *store = r->o->store;
	char now[32], hex[GIT_OID_HEXSZ + 1];
	json_t *ids = NULL, *body;
	struct werr *err;
	int64_t id = 0;

	utc_now_iso(now, sizeof(now));
	git_oid_tostr(hex, sizeof(hex), &r->base.commit);
	memset(&row, 0, sizeof(row));
	row.created = now;
	row.pid = (long)getpid();
	row.task_kind = r->o->task->kind;
	row.task_ref = r->o->task->ref;
	row.base_commit = hex;
	row.sandbox = sandbox_in_force(r);
	row.record = r->rec;
	if ((err = store_begin(store)) != NULL)
		return err;
	if ((err = store_agent_mark_interrupted(store, now, &ids)) != NULL)
		goto fail;
	if (json_array_size(ids) > 0) {
		body = json_pack("{s:O}", "ids", ids);
		err = journal_append(store, "agent.interrupted", "agent", body,
		    NULL);
		json_decref(body);
		if (err != NULL)
			goto fail;
	}
	if ((err = store_agent_insert(store, &row, &id)) != NULL)
		goto fail;
	agent_paths_init(&r->p, r->o->repo_root, id);
	json_object_set_new(r->rec, "id", json_integer(id));
	json_object_set_new(r->rec, "branch", json_string(r->p.branch + 11));
	json_object_set_new(r->rec, "worktree", json_string(r->p.worktree));
	json_object_set_new(r->rec, "run_dir", json_string(r->p.run_dir));
	json_object_set_new(r->rec, "log", json_string(r->p.log));
	json_object_set_new(r->rec, "prompt_file", json_string(r->p.prompt));
	if ((err = store_agent_set_paths(store, id, r->p.branch + 11,
	    r->p.worktree, r->p.log)) != NULL)
		goto fail;
	body = journal_body(r);
	json_object_set_new(body, "state", json_string(state));
	err = journal_append(store, strcmp(state, "refused") == 0 ?
	    "agent.refused" : "agent.started", "agent", body, NULL);
	json_decref(body);
	if (err == NULL && strcmp(state, "running") != 0) {
		utc_now_iso(now, sizeof(now));
		json_object_set_new(r->rec, "state", json_string(state));
		err = store_agent_finish(store, id, state, now, 0, r->rec);
	}
	if (err != NULL)
		goto fail;
	json_decref(ids);
	return store_commit(store);
fail:
	json_decref(ids);
	store_rollback(store);
	return err;
}

static struct werr *
record_finish(struct run *r, const char *state)
{
	struct store *store = r->o->store;
	char now[32];
	char *subject = xasprintf("agent/%lld", (long long)r->p.id);
	json_t *body;
	struct werr *err;

	utc_now_iso(now, sizeof(now));
	json_object_set_new(r->rec, "state", json_string(state));
	json_object_set_new(r->rec, "finished", json_string(now));
	body = journal_body(r);
	if ((err = store_begin(store)) == NULL) {
		if ((err = store_agent_finish(store, r->p.id, state, now,
		    r->review_id, r->rec)) != NULL ||
		    (err = journal_append(store, "agent.finished", subject,
		    body, NULL)) != NULL)
			store_rollback(store);
		else
			err = store_commit(store);
	}
	json_decref(body);
	free(subject);
	return err;
}

static int
agent_succeeded(const struct agent_exec *ex)
{
	return !ex->timed_out && WIFEXITED(ex->status) &&
	    WEXITSTATUS(ex->status) == 0;
}

/* Smoke the queued change before and after; attach the result (and the
 * run) to its review as evidence. Should the smoke campaign change the
 * repository, the run is quarantined and its review rejected. */
static struct werr *
smoke(struct run *r, const struct allowlist_report *rep, const char **state)
{
	struct review_smoke_opts so;
	struct sandbox_guard *guard = NULL;
	git_repository *repo = NULL;
	json_t *res = NULL, *ev;
	char *prefix = NULL, *label = NULL;
	struct werr *err;
	int changed;

	if (git_repository_open(&repo, r->o->repo_root) < 0)
		return werr_git("cannot open '%s'", r->o->repo_root);
	if ((err = agent_repo_no_symlinks(repo, r->p.git_override)) != NULL)
		goto out;
	memset(&so, 0, sizeof(so));
	so.repo_root = r->o->repo_root;
	so.repo = repo;
	so.store = r->o->store;
	so.policy = r->pol;
	so.engines = json_object_get(r->o->task->problem, "engines");
	so.base_tree = &r->base.tree;
	so.change_tree = &rep->result_tree;
	so.gate = rep;
	so.run_prefix = prefix = xasprintf("agent-%lld", (long long)r->p.id);
	so.label = label = xasprintf("agent run %lld", (long long)r->p.id);
	so.work_dir = r->p.run_dir;
	so.on_progress = r->o->on_progress;
	so.arg = r->o->arg;
	if ((err = sandbox_guard_campaign(&guard, repo,
	    r->o->repo_root)) != NULL ||
	    (err = review_smoke(&res, &so)) != NULL)
		goto out;
	/* What the smoke campaign ran is unreviewed too: the same guard. */
	if ((err = agent_settle(r->rec, guard, repo, r->o->store,
	    &r->head, state, &changed)) != NULL)
		goto out;
	if (changed) {
		json_object_set(r->rec, "smoke", res);
		fault_point("agent.guarded");	/* .git back, review pending */
		err = review_reject(r->o->store, r->review_id, "quarantined: "
		    "the smoke campaign of this change changed the repository",
		    "warden");
		goto out;
	}
	json_object_set(r->rec, "smoke", res);
	ev = json_pack("{s:I, s:s, s:O, s:O, s:O, s:O}", "agent_run",
	    (json_int_t)r->p.id, "log", r->p.log,
	    "exit", json_object_get(r->rec, "exit"),
	    "sandbox", json_object_get(r->rec, "sandbox"),
	    "argv", json_object_get(r->rec, "argv"),
	    "diffstat", json_object_get(r->rec, "diffstat"));
	if (json_object_get(r->rec, "transcript") != NULL)
		json_object_set(ev, "transcript", json_object_get(r->rec,
		    "transcript"));
	err = review_add_evidence(r->o->store, r->review_id, "agent-run", ev);
	json_decref(ev);
	if (err == NULL)
		err = review_add_evidence(r->o->store, r->review_id, "smoke",
		    res);
out:
	sandbox_guard_free(guard);
	json_decref(res);
	free(prefix);
	free(label);
	git_repository_free(repo);
	return err;
}

/*
 * Gate the worktree's change and, when it may go, queue and smoke it;
 * *state says what became of it. The worktree is read bounded (see
 * allowlist_worktree_patch): what the reading refuses (a file too large,
 * a symlink, a FIFO, ...) rejects the run like any other violation.
 */
static struct werr *
judge(struct run *r, const struct agent_exec *ex, const char **state)
{
	const struct agent_run_opts *o = r->o;
	struct allowlist_report rep;
	struct review_submission sub;
	struct buf patch = BUF_INIT;
	char *note = NULL, *scratch = path_join(r->p.run_dir, "ignore-rules");
	struct werr *err;
	size_t refused;
	int queue = agent_succeeded(ex) || r->pol->agent.queue_on_failure;

	allowlist_report_init(&rep);
	/* The base's ignore rules go there: made afresh, not through a link. */
	if ((err = path_remove_tree(scratch)) != NULL ||
	    (mkdir(scratch, 0700) == -1 && (err = werr_errno("mkdir",
	    scratch)) != NULL))
		goto out;
	if ((err = allowlist_worktree_patch(&rep, &patch, o->repo,
	    &r->base.tree, r->p.worktree, scratch, &r->base.gate)) != NULL)
		goto out;
	refused = rep.nv;
	if (patch.len == 0 && refused == 0) {
		*state = agent_succeeded(ex) ? "no-change" : "agent-failed";
		goto out;
	}
	note = xasprintf("agent run %lld: %s %s", (long long)r->p.id,
	    o->task->kind, o->task->ref);
	memset(&sub, 0, sizeof(sub));
	sub.source = "agent";
	sub.author = AGENT_AUTHOR;
	sub.note = note;
	sub.patch = patch.data;
	sub.len = patch.len;
	sub.expects = "smoke";	/* approve refuses the review until smoke() */
	progress(r, "gating the change");
	if (queue && refused == 0)
		err = review_submit(&r->review_id, &rep, o->store, o->repo,
		    &r->base, &sub);
	else if (patch.len > 0)
		err = review_check(&rep, o->repo, &r->base, patch.data,
		    patch.len);
	if (err != NULL)
		goto out;
	json_object_set_new(r->rec, "diffstat", agent_diffstat_json(&rep));
	json_object_set_new(r->rec, "gate", review_report_json(&rep));
	if (rep.nv > 0 || !rep.applied) {
		*state = "rejected";
		goto out;
	}
	if (!queue) {
		*state = "agent-failed";
		goto out;
	}
	*state = "queued";
	json_object_set_new(r->rec, "review", json_integer(r->review_id));
	err = smoke(r, &rep, state);
out:
	allowlist_report_free(&rep);
	buf_free(&patch);
	free(note);
	free(scratch);
	return err;
}

/* The run itself, once its row exists; *state is its outcome. */
static struct werr *
run_agent(struct run *r, const char **state)
{
	struct sandbox sb = { 0 };
	struct sandbox_spec spec = { 0 };
	struct sandbox_guard *guard = NULL;
	struct agent_exec ex;
	char **argv = NULL, **env = NULL, *what;
	struct werr *err;
	json_t *t, *x;
	size_t i;
	int changed;

	if ((err = mkdir_p(r->p.home)) != NULL ||
	    (err = mkdir_p(r->p.tmp)) != NULL ||
	    (err = agent_context_write(&r->p, r->o->task, r->pol,
	    r->instructions, r->ilen)) != NULL)
		goto out;
	progress(r, "making the worktree");
	if ((err = agent_worktree_create(r->o->repo, &r->p,
	    &r->base.commit)) != NULL ||
	    (err = agent_view_create(r->o->repo, &r->p,
	    &r->base.commit)) != NULL ||
	    (err = agent_guard_snapshot(&guard, r->o->repo,
	    r->o->repo_root, &r->p, r->o->store, &r->head)) != NULL ||
	    (err = agent_argv(&argv, r->pol, &r->p, r->o->task)) != NULL)
		goto out;
	env = agent_env(r->pol, &r->p);
	if ((err = agent_program_check(argv, env)) != NULL)
		goto out;
	if (r->sandbox_kind != NULL) {
		agent_sandbox_spec(&spec, r->o->repo, r->o->repo_root, r->pol,
		    &r->p, argv, env);
		if ((err = sandbox_prepare(&sb, &spec)) != NULL)
			goto out;
	}
	if (r->sandbox_kind != NULL &&
	    (t = agent_network_warnings(r->pol, env)) != NULL) {
		json_array_foreach(t, i, x)
			progress(r, json_string_value(x));
		json_object_set_new(r->rec, "warnings", t);
	}
	what = xasprintf("running the agent (limit %.0f s, sandbox %s, "
	    "network %s)", r->pol->agent.time_limit_s, sandbox_in_force(r),
	    r->sandbox_kind != NULL ? r->pol->agent.network : "host");
	progress(r, what);
	free(what);
	err = agent_launch(&ex, argv, env, r->sandbox_kind ? &sb : NULL,
	    r->pol, &r->p);
	if (err != NULL)
		goto out;
	json_object_set_new(r->rec, "exit", agent_exec_json(&ex));
	if ((t = agent_transcript(r->p.home)) != NULL)
		json_object_set_new(r->rec, "transcript", t);
	if (!agent_succeeded(&ex))
		json_object_set_new(r->rec, "failure", agent_failure_json(
		    r->pol, r->p.log, &ex));
	progress(r, "checking what the agent changed");
	if ((err = agent_settle(r->rec, guard, r->o->repo,
	    r->o->store, &r->head, state, &changed)) != NULL || changed)
		goto out;
	err = judge(r, &ex, state);
out:
	for (i = 0; env != NULL && env[i] != NULL; i++)
		free(env[i]);
	free(env);
	agent_argv_free(argv);
	sandbox_free(&sb);
	sandbox_spec_free(&spec);
	sandbox_guard_free(guard);
	return err;
}

/* What a dry run shows: everything resolved, nothing made. */
static struct werr *
dry_run(struct run *r)
{
	struct buf ctx = BUF_INIT;
	char **argv = NULL, **env = NULL;
	json_t *a, *names;
	struct werr *err;
	int64_t id;
	size_t i;

	if ((err = store_agent_next_id(r->o->store, &id)) != NULL)
		return err;
	a = json_array();
	names = json_array();
	agent_paths_init(&r->p, r->o->repo_root, id);
	env = agent_env(r->pol, &r->p);
	/* What `agent run` would refuse, refused here too: the template
	 * shown as policy has it. */
	if ((err = agent_argv(&argv, r->pol, &r->p, r->o->task)) != NULL) {
		for (i = 0; i < r->pol->agent.command.n; i++)
			json_array_append_new(a, json_string(
			    r->pol->agent.command.v[i]));
	} else {
		for (i = 0; argv[i] != NULL; i++)
			json_array_append_new(a, json_string(argv[i]));
		err = agent_program_check(argv, env);
	}
	for (i = 0; env[i] != NULL; i++)
		json_array_append_new(names, json_stringn(env[i],
		    (size_t)(strchr(env[i], '=') - env[i])));
	agent_context_text(&ctx, &r->p, r->o->task, r->pol, r->instructions,
	    r->ilen);
	json_object_set_new(r->rec, "dry_run", json_true());
	json_object_set_new(r->rec, "id", json_integer(id));
	json_object_set_new(r->rec, "argv", a);
	json_object_set_new(r->rec, "env", names);
	json_object_set_new(r->rec, "branch", json_string(r->p.branch + 11));
	json_object_set_new(r->rec, "worktree", json_string(r->p.worktree));
	json_object_set_new(r->rec, "prompt_file", json_string(r->p.prompt));
	json_object_set_new(r->rec, "context", json_string(buf_cstr(&ctx)));
	for (i = 0; env != NULL && env[i] != NULL; i++)
		free(env[i]);
	free(env);
	agent_argv_free(argv);
	buf_free(&ctx);
	return err;
}

static json_t *
argv_json(const struct run *r)
{
	char **argv = NULL;
	json_t *a = json_array();
	struct werr *err = agent_argv(&argv, r->pol, &r->p, r->o->task);
	size_t i;

	werr_free(err);
	for (i = 0; argv != NULL && argv[i] != NULL; i++)
		json_array_append_new(a, json_string(argv[i]));
	agent_argv_free(argv);
	return a;
}

struct werr *
agent_run(json_t **out, const struct agent_run_opts *o)
{
	struct run r;
	struct buf why = BUF_INIT;
	const char *state = "error";
	char hex[GIT_OID_HEXSZ + 1], *ref;
	struct werr *err, *fin;

	*out = NULL;
	memset(&r, 0, sizeof(r));
	r.o = o;
	ref = xasprintf("refs/heads/%s", o->official_branch);
	err = review_base_open(&r.base, o->repo, ref);
	free(ref);
	if (err != NULL)
		goto out;
	r.pol = r.base.policy;
	r.rec = json_pack("{s:{s:s, s:s, s:O}, s:s, s:s}", "task", "kind",
	    o->task->kind, "ref", o->task->ref, "problem", o->task->problem,
	    "official_branch", o->official_branch, "base_commit",
	    git_oid_tostr(hex, sizeof(hex), &r.base.commit));
	if (agent_tree_validate(&why, o->repo, &r.base.tree) > 0) {
		err = werr_new(WEXIT_ENV, "the official tree has entries "
		    "warden will not check out for an agent:\n%s",
		    buf_cstr(&why));
		goto out;
	}
	if ((err = read_instructions(&r, o->repo)) != NULL)
		goto out;
	err = decide_sandbox(&r);
	if (o->dry_run) {
		fin = dry_run(&r);
		if (err == NULL)
			err = fin;
		else
			werr_free(fin);
		json_object_set_new(r.rec, "state", json_string(err ?
		    "refused" : "dry-run"));
		if (err != NULL)
			json_object_set_new(r.rec, "error",
			    json_string(err->msg));
		goto out;
	}
	if (err != NULL) {
		/* Recorded, then reported: exit 3. */
		fin = record_start(&r, "refused");
		if (fin != NULL) {
			werr_free(err);
			err = fin;
		}
		goto out;
	}
	progress(&r, "recording the run");
	if ((err = record_start(&r, "running")) != NULL)
		goto out;
	json_object_set_new(r.rec, "argv", argv_json(&r));
	err = run_agent(&r, &state);
	if (err != NULL)
		json_object_set_new(r.rec, "error", json_string(err->msg));
	fin = record_finish(&r, err != NULL ? "error" : state);
	if (err == NULL)
		err = fin;
	else
		werr_free(fin);
out:
	if (r.rec != NULL)
		*out = json_incref(r.rec);
	json_decref(r.rec);
	review_base_free(&r.base);
	agent_paths_free(&r.p);
	free(r.instructions);
	buf_free(&why);
	return err;
}
