/*
 * fuzz-patch.c - libFuzzer harness for the gate's diff input path: every
 * input is gated as a patch against a small base tree (parse, decide,
 * in-memory apply, result diff) and its bytes go through the path rules.
 *
 * Built only with --enable-fuzz and clang; run by `make fuzz`. Must never
 * write outside its scratch repository.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "allowlist.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static git_repository *repo;
static git_oid base_tree;
/* In the current (build) directory, replaced on every run: libFuzzer
 * may end the process without running atexit handlers. */
static const char scratch[] = "fuzz-scratch.git";

static const char *const allow[] = { "adapters/engines/**",
    "adapters/profiles/**" };
static const char *const exec_globs[] = { "adapters/engines/**/serve.sh" };
static const struct allowlist_policy policy = { allow, 2, exec_globs, 1, 0,
    1 << 20, 100 };

static void
add(git_index *idx, const char *path, uint32_t mode, const char *data)
{
	git_index_entry e;

	memset(&e, 0, sizeof(e));
	e.path = path;
	e.mode = mode;
	if (git_index_add_from_buffer(idx, &e, data, strlen(data)) < 0)
		fatal("fuzz setup: cannot add '%s'", path);
}

static void
setup(void)
{
	git_index *idx;

	git_libgit2_init();
	if (system("rm -rf fuzz-scratch.git") != 0 ||
	    git_repository_init(&repo, scratch, 1) < 0 ||
	    git_repository_index(&idx, repo) < 0)
		fatal("fuzz setup: cannot make a scratch repository");
	add(idx, "adapters/engines/ollama.json", 0100644,
	    "{\n  \"name\": \"ollama\",\n  \"port\": 11434\n}\n");
	add(idx, "adapters/engines/mlx_lm/serve.sh", 0100755,
	    "#!/bin/sh\nexec mlx_lm.server\n");
	add(idx, "adapters/engines/old-link", 0120000, "../../workloads");
	add(idx, "adapters/profiles/qwen3.json", 0100644, "{\"ctx\": 4096}\n");
	add(idx, "policy/warden.json", 0100644, "{\"allowlist\": []}\n");
	add(idx, "workloads/chat.jsonl", 0100644, "{\"prompt\": \"x\"}\n");
	if (git_index_write_tree_to(&base_tree, idx, repo) < 0)
		fatal("fuzz setup: cannot write the base tree");
	git_index_free(idx);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct allowlist_report r;
	struct werr *err;
	char *s, *key;

	if (repo == NULL)
		setup();
	allowlist_report_init(&r);
	err = allowlist_gate_patch(&r, repo, &base_tree, (const char *)data,
	    size, &policy, 0);
	werr_free(err);
	allowlist_report_free(&r);

	s = xstrndup((const char *)data, size < 4096 ? size : 4096);
	allowlist_report_init(&r);
	allowlist_check_path(&r, s);
	allowlist_report_free(&r);
	key = allowlist_fold(s);
	free(key);
	(void)allowlist_glob_match("adapters/**/x*/**", s);
	free(s);
	return 0;
}
