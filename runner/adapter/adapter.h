/*
 * adapter.h - engine adapters (adapters/engines/NAME.json) and model
 * profiles (adapters/profiles/NAME.json): how to update and serve an engine,
 * and who a model is to each engine. These files are written by the agent
 * and by community pull requests, so loading validates everything and
 * executes nothing.
 *
 * Placeholders allowed in serve.argv, serve.env values, serve.cwd and the
 * argv of serve.pre_start and serve.stop steps (and in source.build,
 * source.version_argv and fetch_model, where the update step expands
 * those it knows):
 *   {port} {host} {model} {model_path} {model_dir} {model_repo}
 *   {models_dir} {ctx} {home} {env_dir} {scratch} {log_dir}
 *   {adapter_dir} {repo} {concurrency} {split}
 */
#ifndef WARDEN_ADAPTER_H
#define WARDEN_ADAPTER_H

#include <stddef.h>

#include <jansson.h>

#include "error.h"
#include "policy.h"
#include "schema.h"

enum adapter_source_kind {
	SOURCE_GIT,
	SOURCE_PIP,
	SOURCE_BREW,
	SOURCE_NONE,		/* a program already on PATH (the simulator) */
};

struct adapter_kv {
	char *key;
	char *value;
};

/* A short program run before the server starts or after it stopped. */
struct adapter_step {
	struct strlist argv;
	int may_fail;		/* a failure is logged, not an outcome */
	double timeout_s;	/* 0: ADAPTER_STEP_TIMEOUT_S */
};

#define ADAPTER_STEP_TIMEOUT_S 60

struct adapter_split {
	char *split;
	long ctx;			/* 0: no override */
	struct strlist argv_extra;
};

struct adapter {
	char *name;
	char *path;
	json_t *doc;
	char *api;			/* "openai-chat" */
	struct {
		enum adapter_source_kind kind;
		char *url;		/* git */
		char *ref;		/* git: branch or tag pattern */
		char *track;		/* git: "tag" | "branch" */
		char *package;		/* pip package or brew formula */
		char *pin;		/* NULL: newest allowed; pip/brew: a
					   version; git: a tag or commit */
		struct strlist *build;	/* git: argvs run in order, no shell */
		size_t n_build;
		struct strlist pins;	/* extra dependency pins "pkg==ver" */
		struct strlist version_argv;	/* none: prints the version */
	} source;
	struct strlist fetch_model;	/* makes a roster model present */
	struct {
		struct strlist argv;
		struct adapter_kv *env;
		size_t n_env;
		char *cwd;
		char *health;		/* "/health" */
		double ready_timeout_s;
		long ctx;		/* default context, 0 = engine default */
		struct adapter_split *splits;
		size_t n_splits;
		int own_home;		/* HOME/caches under .warden (default 1) */
		char *models_path;	/* "/v1/models" */
		struct adapter_step *pre_start;	/* before each start */
		size_t n_pre_start;
		struct adapter_step *stop;	/* after each stop */
		size_t n_stop;
	} serve;
};

struct profile_engine {
	char *engine;
	char *model;			/* id served / requested; NULL when
					   unsupported */
	char *repo;			/* where the weights come from, optional */
	char *file;			/* weight file, optional */
	char *dir;			/* weight directory, optional */
	char *sha256;			/* expected digest, optional */
	char *unsupported;		/* why the engine does not serve this
					   model (NULL: it does) */
};

struct profile {
	char *name;
	char *path;
	json_t *doc;
	char *hf_id;
	long context_length;
	char *chat_template;
	int thinking_supported;
	char *thinking_switch;		/* chat_template_kwargs key, or NULL */
	struct profile_engine *engines;
	size_t n_engines;
};

const char *adapter_example_text(void);
const char *profile_example_text(void);

struct werr *adapter_load_file(struct adapter **out, const char *path,
    const char *display, struct problems *probs);
struct werr *adapter_load_buffer(struct adapter **out, const char *text,
    size_t len, const char *display, struct problems *probs);
void adapter_free(struct adapter *a);
const struct adapter_split *adapter_split(const struct adapter *a, const char *split);
/* The engine a repository path belongs to: NAME of
 * adapters/engines/NAME.json or adapters/engines/NAME/..., else NULL
 * (caller frees). */
char *adapter_engine_of_path(const char *path);

struct werr *profile_load_file(struct profile **out, const char *path,
    const char *display, struct problems *probs);
struct werr *profile_load_buffer(struct profile **out, const char *text,
    size_t len, const char *display, struct problems *probs);
void profile_free(struct profile *p);
const struct profile_engine *profile_engine(const struct profile *p, const char *engine);

/* Load adapters/engines/NAME.json of repo_root by engine name. */
struct werr *adapter_load_named(struct adapter **out, const char *repo_root,
    const char *name);
struct werr *profile_load_named(struct profile **out, const char *repo_root,
    const char *name);

/* Is s a known placeholder name (without braces)? */
int adapter_placeholder_known(const char *name, size_t len);
/* Check that every {...} in s names a known placeholder. */
int adapter_check_placeholders(const char *s, struct buf *why);

#endif
