/*
 * initrepo.c - `warden init`: lay out a benchmark repository on which
 * `warden campaign` runs at once, and commit it with libgit2. Refuses to
 * write into a non-empty directory. The example workload's text is made
 * in initrepo-workload.c.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>
#include <jansson.h>

#include "adapter.h"
#include "initrepo.h"
#include "policy.h"
#include "agent/agent.h"
#include "buf.h"
#include "util.h"
#include "results/sign.h"

static const char readme_text[] =
"# Benchmark repository\n\n"
"Managed by warden. Layout:\n\n"
"- `policy/warden.json` - maintainer rules: allowlist, gates, caps, rosters\n"
"- `adapters/engines/` - one adapter per engine (agent and community PRs may edit)\n"
"- `adapters/profiles/` - one profile per model (agent and community PRs may edit)\n"
"- `workloads/` - prompt splits and the fidelity task (maintainers only);\n"
"  `chat.jsonl` and `agent.jsonl` are a small example (16 prompts each)\n"
"- `journals/` - exported maintenance journals\n"
"- `results/` - official results, written by `warden publish` only\n\n"
"Run `warden lint` to check policy, adapters, profiles and workloads,\n"
"and `warden campaign` to run the example roster (the simulated engine,\n"
"`warden-simengine`) over the example workload.\n";

static const char gitignore_text[] = "/.warden/\n/snapshots/\n";

#define INIT_SIGNERS "policy/allowed_signers"
#define INIT_KEY ".warden/signing-key"

/* Whether the git repository at dir has no reference at all and an
 * unborn HEAD: just made by git init, or a clone of an empty repository
 * (whose remote is kept). */
static int
git_repo_is_new(const char *dir)
{
	git_repository *repo = NULL;
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	int fresh = 0;

	if (git_repository_open_ext(&repo, dir, GIT_REPOSITORY_OPEN_NO_SEARCH,
	    NULL) != 0)
		return 0;
	if (!git_repository_is_bare(repo) &&
	    git_repository_head_unborn(repo) == 1 &&
	    git_reference_iterator_new(&it, repo) == 0 &&
	    git_reference_next(&ref, it) == GIT_ITEROVER)
		fresh = 1;
	git_reference_free(ref);
	git_reference_iterator_free(it);
	git_repository_free(repo);
	return fresh;
}

/* dir is absent, empty, or holds only a git repository with nothing in
 * it yet. */
static struct werr *
dir_is_empty_or_absent(const char *dir)
{
	struct dirent *de;
	DIR *d;
	int n = 0, git = 0;

	d = opendir(dir);
	if (d == NULL) {
		if (errno == ENOENT)
			return NULL;
		return werr_errno("open directory", dir);
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".git") == 0)
			git = 1;
		else if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	if (n == 0 && git && !git_repo_is_new(dir))
		return werr_new(WEXIT_INPUT, "'%s' is a git repository that "
		    "already has commits or branches; warden init makes a new "
		    "repository (in an empty directory, or an empty clone)",
		    dir);
	if (n != 0)
		return werr_new(WEXIT_INPUT, "'%s' exists and is not empty; "
		    "warden init makes a new repository", dir);
	return NULL;
}

static struct werr *
write_file(const char *dir, const char *rel, const char *text)
{
	char *path = path_join(dir, rel);
	char *slash = strrchr(path, '/');
	struct werr *err;

	*slash = '\0';
	err = mkdir_p(path);
	*slash = '/';
	if (err == NULL)
		err = file_write_atomic(path, text, strlen(text));
	free(path);
	return err;
}

/* The init policy: the default protocol with an example roster, so a new
 * repository lints clean before any real adapter exists. */
static char *
init_policy_text(int signed_snapshots)
{
	json_error_t jerr;
	json_t *doc = json_loads(policy_default_text(), 0, &jerr);
	json_t *models = json_pack("[s]", "qwen3-0.6b");
	char *text, *out;

	if (doc == NULL)
		fatal("built-in policy does not parse: %s", jerr.text);
	json_object_set_new(doc, "rosters",
	    json_pack("{s:[s]}", "example", "example-sim"));
	json_object_set_new(doc, "default_roster", json_string("example"));
	json_object_set(doc, "models", models);
	json_object_set(json_object_get(doc, "gates"), "required_models", models);
	json_decref(models);
	/* The cycle publishes what passes its gate; signed where init made
	 * a key. */
	json_object_set_new(json_object_get(doc, "cycle"), "publish",
	    json_true());
	if (signed_snapshots)
		json_object_set_new(doc, "publish", json_pack("{s:s, s:b}",
		    "allowed_signers", INIT_SIGNERS, "require_signature", 1));
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	out = xasprintf("%s\n", text);
	free(text);
	return out;
}

static struct werr *
commit_all(const char *dir, char *commit_out, const char *branch,
    int signed_snapshots)
{
	git_repository *repo = NULL;
	git_config *cfg = NULL;
	git_index *index = NULL;
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_commit *commit = NULL;
	git_reference *ref = NULL;
	git_oid tree_id, commit_id;
	struct werr *err = NULL;

	if (git_repository_init(&repo, dir, 0) != 0)
		return werr_git("git init '%s'", dir);
	if (git_repository_index(&index, repo) != 0 ||
	    git_index_add_all(index, NULL, 0, NULL, NULL) != 0 ||
	    git_index_write(index) != 0 ||
	    git_index_write_tree(&tree_id, index) != 0) {
		err = werr_git("stage the new repository");
		goto out;
	}
	if (git_signature_default(&sig, repo) != 0 &&
	    git_signature_now(&sig, "warden", "warden@localhost") != 0) {
		err = werr_git("make a signature");
		goto out;
	}
	if (git_tree_lookup(&tree, repo, &tree_id) != 0 ||
	    git_commit_create_v(&commit_id, repo, NULL, sig, sig, NULL,
	    "warden init: benchmark repository layout\n", tree, 0) != 0) {
		err = werr_git("commit the new repository");
		goto out;
	}
	if (git_commit_lookup(&commit, repo, &commit_id) != 0 ||
	    git_branch_create(&ref, repo, branch, commit, 0) != 0) {
		err = werr_git("create branch '%s'", branch);
		goto out;
	}
	/* The maintainer's checkout is a detached HEAD at the official
	 * branch, as warden cycle wants it: the branch moves ahead of it
	 * with every commit warden makes, and the cycle follows. */
	if (git_repository_set_head_detached(repo, &commit_id) != 0) {
		err = werr_git("detach HEAD at '%s'", branch);
		goto out;
	}
	if (signed_snapshots && (git_repository_config(&cfg, repo) != 0 ||
	    git_config_set_string(cfg, "warden.signingKey", INIT_KEY) != 0)) {
		err = werr_git("set git config warden.signingKey");
		goto out;
	}
	git_oid_tostr(commit_out, 41, &commit_id);
out:
	git_config_free(cfg);
	git_reference_free(ref);
	git_commit_free(commit);
	git_tree_free(tree);
	git_signature_free(sig);
	git_index_free(index);
	git_repository_free(repo);
	return err;
}

/* The signing key under .warden/ (ignored) and the allowed_signers file
 * that names it. */
static struct werr *
make_signer(const char *dir, const char *principal)
{
	struct buf line = BUF_INIT;
	char *wdir = path_join(dir, ".warden");
	char *key = path_join(dir, INIT_KEY);
	struct werr *err;

	if ((err = mkdir_p(wdir)) == NULL &&
	    (err = sign_keygen(&line, key, principal)) == NULL)
		err = write_file(dir, INIT_SIGNERS, buf_cstr(&line));
	buf_free(&line);
	free(key);
	free(wdir);
	return err;
}

struct werr *
initrepo_create(const char *dir, char *commit_out, char **official_branch_out,
    const char *signer)
{
	static const char *const keep[] = {
		"journals/.gitkeep", "results/.gitkeep", NULL,
	};
	static const char *const fidelity[] = {
		"task.json", "items.jsonl", "exemplars.jsonl", NULL,
	};
	struct policy *policy = NULL;
	struct werr *err;
	char *policy_text;
	size_t i;

	*official_branch_out = NULL;
	if ((err = dir_is_empty_or_absent(dir)) != NULL)
		return err;
	if ((err = mkdir_p(dir)) != NULL)
		return err;
	policy_text = init_policy_text(signer != NULL);
	err = policy_load_buffer(&policy, policy_text, strlen(policy_text),
	    "policy/warden.json", NULL);
	if (err != NULL)
		fatal("built-in policy does not validate: %s", err->msg);
	err = write_file(dir, "policy/warden.json", policy_text);
	free(policy_text);
	if (err == NULL)
		err = write_file(dir, "adapters/engines/example-sim.json",
		    adapter_example_text());
	if (err == NULL)
		err = write_file(dir, "adapters/profiles/qwen3-0.6b.json",
		    profile_example_text());
	for (i = 0; err == NULL && i < policy->campaign.splits.n; i++) {
		char *rel = xasprintf("workloads/%s.jsonl",
		    policy->campaign.splits.v[i]);
		char *text = initrepo_workload_text(policy->campaign.splits.v[i]);

		err = write_file(dir, rel, text);
		free(text);
		free(rel);
	}
	for (i = 0; err == NULL && fidelity[i] != NULL; i++) {
		char *rel = xasprintf("workloads/fidelity/%s", fidelity[i]);
		char *text = initrepo_fidelity_text(fidelity[i]);

		err = write_file(dir, rel, text);
		free(text);
		free(rel);
	}
	if (err == NULL && signer != NULL)
		err = make_signer(dir, signer);
	if (err == NULL && policy->agent.instructions != NULL)
		err = write_file(dir, policy->agent.instructions,
		    agent_instructions_default_text());
	if (err == NULL)
		err = write_file(dir, "README.md", readme_text);
	if (err == NULL)
		err = write_file(dir, ".gitignore", gitignore_text);
	for (i = 0; err == NULL && keep[i] != NULL; i++)
		err = write_file(dir, keep[i], "");
	if (err == NULL)
		err = commit_all(dir, commit_out, policy->official_branch,
		    signer != NULL);
	if (err == NULL)
		*official_branch_out = xstrdup(policy->official_branch);
	policy_free(policy);
	return err;
}
