/*
 * profile.c - load and validate model profiles (adapters/profiles/NAME.json):
 * who a model is to each engine, or why an engine does not serve it. Like
 * adapters these files are inside the write allowlist, so everything is
 * validated and nothing is executed or fetched here. See adapter.h.
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "adapter-private.h"
#include "util.h"

static int
check_sha256(const json_t *v, struct buf *why)
{
	const char *s = json_string_value(v);
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			break;
	if (i != 64 || s[i] != '\0') {
		buf_puts(why, "must be 64 lowercase hex digits");
		return -1;
	}
	return 0;
}

/* An engine entry of a profile names the model it serves, or says why
 * the engine does not serve it; never both. */
static int
check_profile_engine(const json_t *v, struct buf *why)
{
	int has_model = json_object_get(v, "model") != NULL;
	int has_reason = json_object_get(v, "unsupported") != NULL;

	if (has_model && has_reason) {
		buf_puts(why, "names a 'model' and says it is 'unsupported'; "
		    "give one of them");
		return -1;
	}
	if (!has_model && !has_reason) {
		buf_puts(why, "needs 'model' (the id the engine serves) or "
		    "'unsupported' (why the engine does not serve this model)");
		return -1;
	}
	if (has_reason && (json_object_get(v, "file") != NULL ||
	    json_object_get(v, "dir") != NULL ||
	    json_object_get(v, "repo") != NULL ||
	    json_object_get(v, "sha256") != NULL)) {
		buf_puts(why, "is 'unsupported' and so names no weights "
		    "('repo', 'file', 'dir', 'sha256')");
		return -1;
	}
	return 0;
}

static const struct schema s_string = { .type = SCHEMA_STRING, .has_min = 1, .min = 1 };
static const struct schema s_name = { .type = SCHEMA_STRING, .has_min = 1, .min = 1,
    .check = adapter_check_name };
static const struct schema s_bool = { .type = SCHEMA_BOOLEAN };
static const struct schema s_one = { .type = SCHEMA_INTEGER, .has_min = 1, .min = 1,
    .has_max = 1, .max = 1 };
static const struct schema s_sha = { .type = SCHEMA_STRING, .check = check_sha256 };

static const struct schema_field f_profile_engine[] = {
	{ "model", &s_string, 0 },
	{ "repo", &s_string, 0 },
	{ "file", &s_string, 0 },
	{ "dir", &s_string, 0 },
	{ "sha256", &s_sha, 0 },
	{ "unsupported", &s_string, 0 },
	{ "notes", &s_string, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_profile_engine = { .type = SCHEMA_OBJECT,
    .fields = f_profile_engine, .check = check_profile_engine };
static const struct schema s_profile_engines = { .type = SCHEMA_MAP,
    .items = &s_profile_engine };
static const struct schema_field f_thinking[] = {
	{ "supported", &s_bool, 1 },
	{ "switch", &s_string, 0 },
	{ NULL, NULL, 0 },
};
static const struct schema s_thinking = { .type = SCHEMA_OBJECT, .fields = f_thinking };
static const struct schema s_pos = { .type = SCHEMA_INTEGER, .has_min = 1, .min = 1 };

static const struct schema_field f_profile[] = {
	{ "schema", &s_one, 1 },
	{ "name", &s_name, 1 },
	{ "hf_id", &s_string, 1 },
	{ "context_length", &s_pos, 1 },
	{ "chat_template", &s_string, 0 },
	{ "thinking", &s_thinking, 1 },
	{ "engines", &s_profile_engines, 1 },
	{ NULL, NULL, 0 },
};
static const struct schema s_profile = { .type = SCHEMA_OBJECT, .fields = f_profile };

static const char example_profile[] =
"{\n"
"  \"schema\": 1,\n"
"  \"name\": \"qwen3-0.6b\",\n"
"  \"hf_id\": \"Qwen/Qwen3-0.6B\",\n"
"  \"context_length\": 40960,\n"
"  \"chat_template\": \"ChatML; thinking off through chat_template_kwargs\",\n"
"  \"thinking\": { \"supported\": true, \"switch\": \"enable_thinking\" },\n"
"  \"engines\": {\n"
"    \"example-sim\": { \"model\": \"Qwen/Qwen3-0.6B\" }\n"
"  }\n"
"}\n";

const char *
profile_example_text(void)
{
	return example_profile;
}

struct werr *
profile_load_buffer(struct profile **out, const char *text, size_t len,
    const char *display, struct problems *probs)
{
	struct problems local = { NULL, 0, 0 };
	struct problems *pp = probs != NULL ? probs : &local;
	size_t before = pp->n, i;
	struct profile *p;
	json_t *doc, *o, *v;
	const char *key;

	*out = NULL;
	if (schema_load(&doc, &s_profile, text, len, display, pp) != 0)
		return problems_since_werr(pp, &local, before);
	adapter_check_file_name(display, doc, text, len, pp);
	if (pp->n != before) {
		json_decref(doc);
		return problems_since_werr(pp, &local, before);
	}
	p = xcalloc(1, sizeof(*p));
	p->doc = doc;
	p->path = xstrdup(display);
	p->name = adapter_opt_strdup(doc, "name");
	p->hf_id = adapter_opt_strdup(doc, "hf_id");
	p->context_length = (long)json_integer_value(json_object_get(doc, "context_length"));
	p->chat_template = adapter_opt_strdup(doc, "chat_template");
	o = json_object_get(doc, "thinking");
	p->thinking_supported = json_is_true(json_object_get(o, "supported"));
	p->thinking_switch = adapter_opt_strdup(o, "switch");
	o = json_object_get(doc, "engines");
	p->n_engines = json_object_size(o);
	p->engines = xcalloc(p->n_engines + 1, sizeof(*p->engines));
	i = 0;
	json_object_foreach(o, key, v) {
		p->engines[i].engine = xstrdup(key);
		p->engines[i].model = adapter_opt_strdup(v, "model");
		p->engines[i].repo = adapter_opt_strdup(v, "repo");
		p->engines[i].file = adapter_opt_strdup(v, "file");
		p->engines[i].dir = adapter_opt_strdup(v, "dir");
		p->engines[i].sha256 = adapter_opt_strdup(v, "sha256");
		p->engines[i].unsupported = adapter_opt_strdup(v, "unsupported");
		i++;
	}
	problems_free(&local);
	*out = p;
	return NULL;
}

struct werr *
profile_load_file(struct profile **out, const char *path, const char *display,
    struct problems *probs)
{
	struct buf text = BUF_INIT;
	struct werr *err;

	*out = NULL;
	if ((err = schema_read_input(&text, path, FILE_MAX_CONFIG)) == NULL)
		err = profile_load_buffer(out, buf_cstr(&text), text.len,
		    display != NULL ? display : path, probs);
	buf_free(&text);
	return err;
}

const struct profile_engine *
profile_engine(const struct profile *p, const char *engine)
{
	size_t i;

	for (i = 0; i < p->n_engines; i++)
		if (strcmp(p->engines[i].engine, engine) == 0)
			return &p->engines[i];
	return NULL;
}

void
profile_free(struct profile *p)
{
	size_t i;

	if (p == NULL)
		return;
	json_decref(p->doc);
	free(p->path);
	free(p->name);
	free(p->hf_id);
	free(p->chat_template);
	free(p->thinking_switch);
	for (i = 0; i < p->n_engines; i++) {
		free(p->engines[i].engine);
		free(p->engines[i].model);
		free(p->engines[i].repo);
		free(p->engines[i].file);
		free(p->engines[i].dir);
		free(p->engines[i].sha256);
		free(p->engines[i].unsupported);
	}
	free(p->engines);
	free(p);
}

struct werr *
profile_load_named(struct profile **out, const char *repo_root, const char *name)
{
	char *path, *display;
	struct werr *err;

	*out = NULL;
	if ((err = adapter_find_named(repo_root, "adapters/profiles", name, &path, &display)) != NULL)
		return err;
	err = profile_load_file(out, path, display, NULL);
	free(path);
	free(display);
	return err;
}
