/*
 * fuzz-adapter.c - libFuzzer harness for the adapter loader. Adapters are
 * written by the agent and by community pull requests, so whatever bytes
 * adapters/engines/fuzz.json holds, adapter_load_buffer either refuses
 * them with input errors naming the file, or gives an adapter whose every
 * template the engine can expand: the loader's list of placeholders and
 * engine_expand's must agree, or a checked adapter fails at start. What
 * it accepts, written back out by jansson, is accepted again.
 *
 * Built only with --enable-fuzz and clang; run by `make fuzz`. Must never
 * write a file, keep state from one input to the next, or leak.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "engine.h"
#include "fuzz-common.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char name[] = "adapters/engines/fuzz.json";

static const struct engine_vars vars = {
	.port = "8000", .host = "127.0.0.1", .model = "m",
	.model_path = "/m/w.gguf", .model_dir = "/m", .model_repo = "org/m",
	.hf_id = "org/m", .models_dir = "/m", .ctx = "4096", .home = "/h",
	.env_dir = "/e", .scratch = "/s", .log_dir = "/l", .adapter_dir = "/a",
	.repo = "/r", .concurrency = "8", .split = "chat",
};

/* A template the loader accepted must expand. */
static void
expands(const char *tmpl)
{
	struct buf b = BUF_INIT;
	struct werr *err = engine_expand(&b, tmpl, &vars);

	fuzz_assert(err == NULL, "an accepted template does not expand");
	buf_free(&b);
}

static void
expands_all(const struct strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		expands(l->v[i]);
}

static void
check_adapter(const struct adapter *a)
{
	size_t i;

	fuzz_assert(a->name != NULL && strcmp(a->name, "fuzz") == 0,
	    "name is not the file's");
	fuzz_assert(a->serve.argv.n >= 1, "no serve.argv");
	fuzz_assert(a->serve.health != NULL && a->serve.health[0] == '/',
	    "health is not a path");
	expands_all(&a->serve.argv);
	for (i = 0; i < a->serve.n_env; i++)
		expands(a->serve.env[i].value);
	if (a->serve.cwd != NULL)
		expands(a->serve.cwd);
	for (i = 0; i < a->serve.n_splits; i++)
		expands_all(&a->serve.splits[i].argv_extra);
	for (i = 0; i < a->serve.n_pre_start; i++)
		expands_all(&a->serve.pre_start[i].argv);
	for (i = 0; i < a->serve.n_stop; i++)
		expands_all(&a->serve.stop[i].argv);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct problems probs = { NULL, 0, 0 };
	struct adapter *a = NULL, *again = NULL;
	struct werr *err;
	char *text;

	err = adapter_load_buffer(&a, (const char *)data, size, name, &probs);
	if (err != NULL) {
		fuzz_assert(a == NULL, "an adapter and an error");
		fuzz_check_refusal(err, &probs, name);
		werr_free(err);
		problems_free(&probs);
		return 0;
	}
	fuzz_assert(probs.n == 0, "problems but no error");
	check_adapter(a);
	text = json_dumps(a->doc, JSON_INDENT(2));
	fuzz_assert(text != NULL, "accepted adapter does not dump");
	err = adapter_load_buffer(&again, text, strlen(text), name, NULL);
	fuzz_assert(err == NULL, "accepted adapter refused when written back");
	fuzz_assert(json_equal(a->doc, again->doc), "round trip changed it");
	free(text);
	adapter_free(again);
	adapter_free(a);
	problems_free(&probs);
	return 0;
}
