/*
 * adapter.c - load and validate engine adapters (profile.c does model
 * profiles). These files are inside the write allowlist (the agent and
 * community PRs edit them), so everything is validated and nothing is
 * executed here: argv templates are checked for known placeholders, never
 * expanded or run.
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "adapter-private.h"
#include "util.h"

static const char *const placeholders[] = {
	"port", "host", "model", "model_path", "model_dir", "model_repo",
	"hf_id", "models_dir", "ctx", "home", "env_dir", "scratch", "log_dir",
	"adapter_dir", "repo", "concurrency", "split", NULL,
};

int
adapter_placeholder_known(const char *name, size_t len)
{
	const char *const *p;

	for (p = placeholders; *p != NULL; p++)
		if (strlen(*p) == len && memcmp(*p, name, len) == 0)
			return 1;
	return 0;
}

int
adapter_check_placeholders(const char *s, struct buf *why)
{
	const char *open, *close;

	while ((open = strchr(s, '{')) != NULL) {
		close = strchr(open, '}');
		if (close == NULL) {
			buf_printf(why, "has an unclosed placeholder '%s'", open);
			return -1;
		}
		if (!adapter_placeholder_known(open + 1, (size_t)(close - open - 1))) {
			buf_printf(why, "has unknown placeholder '%.*s'",
			    (int)(close - open + 1), open);
			return -1;
		}
		s = close + 1;
	}
	return 0;
}

static int
check_template(const json_t *v, struct buf *why)
{
	return adapter_check_placeholders(json_string_value(v), why);
}

int
adapter_check_name(const json_t *v, struct buf *why)
{
	const char *s = json_string_value(v);

	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && strchr("._-", *s) == NULL) {
			buf_printf(why, "may hold only letters, digits, '.', '_' and '-'");
			return -1;
		}
	return 0;
}

static int
check_url_path(const json_t *v, struct buf *why)
{
	if (json_string_value(v)[0] != '/') {
		buf_puts(why, "must be a path starting with '/'");
		return -1;
	}
	return 0;
}


static int
check_source(const json_t *v, struct buf *why)
{
	const char *kind = json_string_value(json_object_get(v, "kind"));

	if (kind == NULL)
		return 0;	/* reported as missing by the schema */
	if (strcmp(kind, "git") == 0 && (json_object_get(v, "url") == NULL ||
	    json_object_get(v, "ref") == NULL)) {
		buf_puts(why, "of kind 'git' needs 'url' and 'ref'");
		return -1;
	}
	if ((strcmp(kind, "pip") == 0 || strcmp(kind, "brew") == 0) &&
	    json_object_get(v, "package") == NULL) {
		buf_printf(why, "of kind '%s' needs 'package'", kind);
		return -1;
	}
	return 0;
}

/* Build steps and other argvs run without a shell: a shell operator as a
 * word of its own would reach the program as an argument. */
static int
check_no_shell(const json_t *v, struct buf *why)
{
	static const char *const ops[] = { "&&", "||", ";", "|", "&", ">",
	    ">>", "<", NULL };
	const char *s = json_string_value(v);
	const char *const *op;

	for (op = ops; *op != NULL; op++)
		if (strcmp(s, *op) == 0) {
			buf_printf(why, "is the shell operator '%s'; argvs run "
			    "without a shell: make it a step of its own", s);
			return -1;
		}
	return adapter_check_placeholders(s, why);
}

static const char *const source_kinds[] = { "git", "pip", "brew", "none", NULL };
static const char *const git_tracks[] = { "tag", "branch", NULL };
static const char *const apis[] = { "openai-chat", NULL };

static const struct schema s_string = { .type = SCHEMA_STRING, .has_min = 1, .min = 1 };
static const struct schema s_name = { .type = SCHEMA_STRING, .has_min = 1, .min = 1,
    .check = adapter_check_name };
static const struct schema s_opt_string = { .type = SCHEMA_STRING, .nullable = 1 };
static const struct schema s_template = { .type = SCHEMA_STRING, .has_min = 1, .min = 1,
    .check = check_template };
static const struct schema s_templates = { .type = SCHEMA_ARRAY, .items = &s_template };
static const struct schema s_templates1 = { .type = SCHEMA_ARRAY, .items = &s_template,
    .has_min = 1, .min = 1 };
static const struct schema s_argv_word = { .type = SCHEMA_STRING, .has_min = 1, .min = 1,
    .check = check_no_shell };
static const struct schema s_argv = { .type = SCHEMA_ARRAY, .items = &s_argv_word,
    .has_min = 1, .min = 1 };
static const struct schema s_argvs = { .type = SCHEMA_ARRAY, .items = &s_argv };
static const struct schema s_pin_spec = { .type = SCHEMA_STRING, .check = policy_check_pin_spec };
static const struct schema s_pin_specs = { .type = SCHEMA_ARRAY, .items = &s_pin_spec };
static const struct schema s_env = { .type = SCHEMA_MAP, .items = &s_template };
static const struct schema s_bool = { .type = SCHEMA_BOOLEAN };
static const struct schema s_seconds = { .type = SCHEMA_NUMBER, .has_min = 1, .min = 0 };
static const struct schema s_ctx = { .type = SCHEMA_INTEGER, .has_min = 1, .min = 0 };
static const struct schema s_url_path = { .type = SCHEMA_STRING, .has_min = 1, .min = 1,
    .check = check_url_path };
static const struct schema s_one = { .type = SCHEMA_INTEGER, .has_min = 1, .min = 1,
    .has_max = 1, .max = 1 };
static const struct schema s_kind = { .type = SCHEMA_STRING, .one_of = source_kinds };
static const struct schema s_track = { .type = SCHEMA_STRING, .one_of = git_tracks };
static const struct schema s_api = { .type = SCHEMA_STRING, .one_of = apis };

static const struct schema_field f_source[] = {
	{ "kind", &s_kind, 1 },
	{ "url", &s_string, 0 },
	{ "ref", &s_string, 0 },
	{ "track", &s_track, 0 },
	{ "package", &s_string, 0 },
	{ "pin", &s_opt_string, 0 },
	{ "pins", &s_pin_specs, 0 },
	{ "build", &s_argvs, 0 },
	{ "version_argv", &s_argv, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_source = { .type = SCHEMA_OBJECT, .fields = f_source,
    .check = check_source };

static const struct schema s_step_seconds = { .type = SCHEMA_NUMBER, .has_min = 1,
    .min = 0.001, .has_max = 1, .max = 3600 };
static const struct schema_field f_step[] = {
	{ "argv", &s_templates1, 1 },
	{ "may_fail", &s_bool, 0 },
	{ "timeout_s", &s_step_seconds, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_step = { .type = SCHEMA_OBJECT, .fields = f_step };
static const struct schema s_steps = { .type = SCHEMA_ARRAY, .items = &s_step };

static const struct schema_field f_split[] = {
	{ "ctx", &s_ctx, 0 },
	{ "argv_extra", &s_templates, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_split = { .type = SCHEMA_OBJECT, .fields = f_split };
static const struct schema s_splits = { .type = SCHEMA_MAP, .items = &s_split };

static const struct schema_field f_serve[] = {
	{ "argv", &s_templates1, 1 },
	{ "env", &s_env, 0 },
	{ "cwd", &s_template, 0 },
	{ "health", &s_url_path, 1 },
	{ "models_path", &s_url_path, 0 },
	{ "ready_timeout_s", &s_seconds, 0 },
	{ "ctx", &s_ctx, 0 },
	{ "own_home", &s_bool, 0 },
	{ "splits", &s_splits, 0 },
	{ "pre_start", &s_steps, 0 },
	{ "stop", &s_steps, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_serve = { .type = SCHEMA_OBJECT, .fields = f_serve };

static const struct schema_field f_adapter[] = {
	{ "schema", &s_one, 1 },
	{ "name", &s_name, 1 },
	{ "api", &s_api, 1 },
	{ "notes", &s_string, 0 },
	{ "source", &s_source, 1 },
	{ "fetch_model", &s_argv, 0 },
	{ "serve", &s_serve, 1 },
	{ NULL, NULL, 0 },
};
static const struct schema s_adapter = { .type = SCHEMA_OBJECT, .fields = f_adapter };


static const char example_adapter[] =
"{\n"
"  \"schema\": 1,\n"
"  \"name\": \"example-sim\",\n"
"  \"api\": \"openai-chat\",\n"
"  \"notes\": \"The simulated engine, as an example of an adapter.\",\n"
"  \"source\": { \"kind\": \"none\" },\n"
"  \"serve\": {\n"
"    \"argv\": [\"warden-simengine\", \"--host\", \"{host}\", \"--port\", \"{port}\",\n"
"             \"--model\", \"{model}\", \"--mode\", \"continuous\", \"--max-batch\", \"16\",\n"
"             \"--labels\", \"{repo}/workloads/fidelity/items.jsonl\", \"--accuracy\", \"0.9\"],\n"
"    \"health\": \"/health\",\n"
"    \"models_path\": \"/v1/models\",\n"
"    \"ready_timeout_s\": 30,\n"
"    \"splits\": { \"agent\": { \"ctx\": 16384 } }\n"
"  }\n"
"}\n";


const char *
adapter_example_text(void)
{
	return example_adapter;
}


char *
adapter_opt_strdup(const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s != NULL ? xstrdup(s) : NULL;
}

/* The name inside the file must be the file's own name. */
void
adapter_check_file_name(const char *display, const json_t *doc, const char *text,
    size_t len, struct problems *probs)
{
	const char *name = json_string_value(json_object_get(doc, "name"));
	const char *base = strrchr(display, '/');
	size_t n;

	base = base != NULL ? base + 1 : display;
	if (!str_endswith(base, ".json") || name == NULL)
		return;
	n = strlen(base) - 5;
	if (strlen(name) != n || strncmp(base, name, n) != 0)
		problems_add_field(probs, display, text, len, "name",
		    "is '%s' but the file is named '%s'", name, base);
}

static void
steps_from_json(struct adapter_step **out, size_t *n, const json_t *arr)
{
	const json_t *v, *t;
	size_t i;

	*n = json_array_size(arr);
	*out = xcalloc(*n + 1, sizeof(**out));
	json_array_foreach(arr, i, v) {
		strlist_from_json(&(*out)[i].argv, json_object_get(v, "argv"));
		(*out)[i].may_fail = json_is_true(json_object_get(v, "may_fail"));
		t = json_object_get(v, "timeout_s");
		(*out)[i].timeout_s = t != NULL ? json_number_value(t) :
		    ADAPTER_STEP_TIMEOUT_S;
	}
}

static void
steps_free(struct adapter_step *steps, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		strlist_free(&steps[i].argv);
	free(steps);
}

struct werr *
adapter_load_buffer(struct adapter **out, const char *text, size_t len,
    const char *display, struct problems *probs)
{
	struct problems local = { NULL, 0, 0 };
	struct problems *pp = probs != NULL ? probs : &local;
	size_t before = pp->n, i;
	struct adapter *a;
	json_t *doc, *src, *serve, *o, *v;
	const char *key, *kind;

	*out = NULL;
	if (schema_load(&doc, &s_adapter, text, len, display, pp) != 0)
		return problems_since_werr(pp, &local, before);
	adapter_check_file_name(display, doc, text, len, pp);
	if (pp->n != before) {
		json_decref(doc);
		return problems_since_werr(pp, &local, before);
	}
	a = xcalloc(1, sizeof(*a));
	a->doc = doc;
	a->path = xstrdup(display);
	a->name = adapter_opt_strdup(doc, "name");
	a->api = adapter_opt_strdup(doc, "api");
	src = json_object_get(doc, "source");
	kind = json_string_value(json_object_get(src, "kind"));
	a->source.kind = strcmp(kind, "git") == 0 ? SOURCE_GIT :
	    strcmp(kind, "pip") == 0 ? SOURCE_PIP :
	    strcmp(kind, "brew") == 0 ? SOURCE_BREW : SOURCE_NONE;
	a->source.url = adapter_opt_strdup(src, "url");
	a->source.ref = adapter_opt_strdup(src, "ref");
	a->source.track = adapter_opt_strdup(src, "track");
	a->source.package = adapter_opt_strdup(src, "package");
	a->source.pin = adapter_opt_strdup(src, "pin");
	o = json_object_get(src, "build");
	a->source.n_build = json_array_size(o);
	a->source.build = xcalloc(a->source.n_build + 1, sizeof(*a->source.build));
	json_array_foreach(o, i, v)
		strlist_from_json(&a->source.build[i], v);
	strlist_from_json(&a->source.pins, json_object_get(src, "pins"));
	strlist_from_json(&a->source.version_argv,
	    json_object_get(src, "version_argv"));
	strlist_from_json(&a->fetch_model, json_object_get(doc, "fetch_model"));
	serve = json_object_get(doc, "serve");
	strlist_from_json(&a->serve.argv, json_object_get(serve, "argv"));
	o = json_object_get(serve, "env");
	a->serve.n_env = json_object_size(o);
	a->serve.env = xcalloc(a->serve.n_env + 1, sizeof(*a->serve.env));
	i = 0;
	json_object_foreach(o, key, v) {
		a->serve.env[i].key = xstrdup(key);
		a->serve.env[i].value = xstrdup(json_string_value(v));
		i++;
	}
	a->serve.cwd = adapter_opt_strdup(serve, "cwd");
	a->serve.health = adapter_opt_strdup(serve, "health");
	a->serve.models_path = adapter_opt_strdup(serve, "models_path");
	if (a->serve.models_path == NULL)
		a->serve.models_path = xstrdup("/v1/models");
	v = json_object_get(serve, "ready_timeout_s");
	a->serve.ready_timeout_s = v != NULL ? json_number_value(v) : 0;
	a->serve.ctx = (long)json_integer_value(json_object_get(serve, "ctx"));
	v = json_object_get(serve, "own_home");
	a->serve.own_home = v == NULL || json_is_true(v);
	o = json_object_get(serve, "splits");
	a->serve.n_splits = json_object_size(o);
	a->serve.splits = xcalloc(a->serve.n_splits + 1, sizeof(*a->serve.splits));
	i = 0;
	json_object_foreach(o, key, v) {
		a->serve.splits[i].split = xstrdup(key);
		a->serve.splits[i].ctx = (long)json_integer_value(json_object_get(v, "ctx"));
		strlist_from_json(&a->serve.splits[i].argv_extra,
		    json_object_get(v, "argv_extra"));
		i++;
	}
	steps_from_json(&a->serve.pre_start, &a->serve.n_pre_start,
	    json_object_get(serve, "pre_start"));
	steps_from_json(&a->serve.stop, &a->serve.n_stop,
	    json_object_get(serve, "stop"));
	problems_free(&local);
	*out = a;
	return NULL;
}

struct werr *
adapter_load_file(struct adapter **out, const char *path, const char *display,
    struct problems *probs)
{
	struct buf text = BUF_INIT;
	struct werr *err;

	*out = NULL;
	if ((err = schema_read_input(&text, path, FILE_MAX_CONFIG)) == NULL)
		err = adapter_load_buffer(out, buf_cstr(&text), text.len,
		    display != NULL ? display : path, probs);
	buf_free(&text);
	return err;
}

const struct adapter_split *
adapter_split(const struct adapter *a, const char *split)
{
	size_t i;

	for (i = 0; i < a->serve.n_splits; i++)
		if (strcmp(a->serve.splits[i].split, split) == 0)
			return &a->serve.splits[i];
	return NULL;
}

void
adapter_free(struct adapter *a)
{
	size_t i;

	if (a == NULL)
		return;
	json_decref(a->doc);
	free(a->path);
	free(a->name);
	free(a->api);
	free(a->source.url);
	free(a->source.ref);
	free(a->source.track);
	free(a->source.package);
	free(a->source.pin);
	for (i = 0; i < a->source.n_build; i++)
		strlist_free(&a->source.build[i]);
	free(a->source.build);
	strlist_free(&a->source.pins);
	strlist_free(&a->source.version_argv);
	strlist_free(&a->fetch_model);
	strlist_free(&a->serve.argv);
	for (i = 0; i < a->serve.n_env; i++) {
		free(a->serve.env[i].key);
		free(a->serve.env[i].value);
	}
	free(a->serve.env);
	free(a->serve.cwd);
	free(a->serve.health);
	free(a->serve.models_path);
	for (i = 0; i < a->serve.n_splits; i++) {
		free(a->serve.splits[i].split);
		strlist_free(&a->serve.splits[i].argv_extra);
	}
	free(a->serve.splits);
	steps_free(a->serve.pre_start, a->serve.n_pre_start);
	steps_free(a->serve.stop, a->serve.n_stop);
	free(a);
}





struct werr *
adapter_find_named(const char *repo_root, const char *dir, const char *name,
    char **path_out, char **display_out)
{
	struct buf why = BUF_INIT;
	json_t *s = json_string(name);
	struct werr *err = NULL;

	if (adapter_check_name(s, &why) == -1)
		err = werr_usage("'%s' is not a valid name: it %s", name,
		    buf_cstr(&why));
	json_decref(s);
	buf_free(&why);
	if (err != NULL)
		return err;
	*display_out = xasprintf("%s/%s.json", dir, name);
	*path_out = path_join(repo_root, *display_out);
	if (!path_exists(*path_out)) {
		err = werr_new(WEXIT_INPUT, "no such adapter or profile: '%s'",
		    *display_out);
		free(*path_out);
		free(*display_out);
	}
	return err;
}

struct werr *
adapter_load_named(struct adapter **out, const char *repo_root, const char *name)
{
	char *path, *display;
	struct werr *err;

	*out = NULL;
	if ((err = adapter_find_named(repo_root, "adapters/engines", name, &path, &display)) != NULL)
		return err;
	err = adapter_load_file(out, path, display, NULL);
	free(path);
	free(display);
	return err;
}


char *
adapter_engine_of_path(const char *path)
{
	const char *s, *end;

	if (path == NULL || !str_startswith(path, "adapters/engines/"))
		return NULL;
	s = path + 17;
	if ((end = strchr(s, '/')) != NULL)
		return xstrndup(s, (size_t)(end - s));
	if (str_endswith(s, ".json") && strlen(s) > 5)
		return xstrndup(s, strlen(s) - 5);
	return NULL;
}
