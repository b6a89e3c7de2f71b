/*
 * campaign-input.c - workloads, request bodies and provenance for the
 * campaign. See campaign-input.h. Never prints.
 */
#include "config.h"

#include <sys/utsname.h>
#ifdef __APPLE__
#include <sys/sysctl.h>
#endif

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "campaign-input.h"
#include "memsample.h"
#include "repo.h"
#include "util.h"

void
workload_free(struct workload *w)
{
	size_t i;

	for (i = 0; i < w->ntimed; i++)
		json_decref(w->timed[i]);
	for (i = 0; i < w->nwarm; i++)
		json_decref(w->warm[i]);
	free(w->timed);
	free(w->warm);
	free(w->split);
}

/*
 * The lines of a workload into w. Without probs the first bad line is the
 * error; with probs (lint) every bad line is a problem there (one jansson
 * cannot parse makes the file unusable, exit 2) and the error is NULL.
 */
static struct werr *
parse_lines(struct workload *w, const char *text, size_t len,
    const char *name, struct problems *probs)
{
	const char *line = text, *end = text + len, *nl;
	json_error_t jerr;
	json_t *item;
	int lineno = 0;

	for (; line < end; line = nl + 1) {
		size_t n;

		lineno++;
		if ((nl = memchr(line, '\n', (size_t)(end - line))) == NULL)
			nl = end;
		n = (size_t)(nl - line);
		if (n == 0)
			continue;
		/* By length: a NUL byte is jansson's error, not the end. */
		item = json_loadb(line, n, 0, &jerr);
		if (item == NULL) {
			/* jansson says why: a syntax error, or a nesting
			 * deeper than it parses. */
			if (probs == NULL)
				return werr_at(name, lineno, jerr.column, NULL,
				    "%s", jerr.text);
			problems_add(probs, name, lineno, jerr.column, NULL,
			    "invalid JSON: %s", jerr.text);
			probs->v[probs->n - 1].unusable = 1;
			goto next;
		}
		if (!json_is_object(item) ||
		    !json_is_array(json_object_get(item, "messages"))) {
			json_decref(item);
			if (probs == NULL)
				return werr_at(name, lineno, 0, NULL, "not a "
				    "workload line (an object with "
				    "'messages')");
			problems_add(probs, name, lineno, 0, NULL, "not a "
			    "workload line (an object with 'messages')");
			goto next;
		}
		if (strcmp(json_string_value(json_object_get(item, "set")) ?
		    json_string_value(json_object_get(item, "set")) : "timed",
		    "warmup") == 0) {
			w->warm = xrealloc(w->warm, (w->nwarm + 1) * sizeof(*w->warm));
			w->warm[w->nwarm++] = item;
		} else {
			w->timed = xrealloc(w->timed,
			    (w->ntimed + 1) * sizeof(*w->timed));
			w->timed[w->ntimed++] = item;
		}
next:
		if (nl == end)
			break;
	}
	if (w->ntimed == 0 && probs != NULL)
		problems_add(probs, name, 0, 0, NULL, "no timed prompts");
	else if (w->ntimed == 0)
		return werr_new(WEXIT_INPUT, "%s: no timed prompts", name);
	return NULL;
}

struct werr *
workload_parse(struct workload *w, const char *text, size_t len,
    const char *name)
{
	return parse_lines(w, text, len, name, NULL);
}

void
workload_lint(const char *text, size_t len, const char *name,
    struct problems *probs)
{
	struct workload w;

	memset(&w, 0, sizeof(w));
	werr_free(parse_lines(&w, text, len, name, probs));
	workload_free(&w);
}

struct werr *
workload_load(struct workload *w, const char *repo_root, const char *split)
{
	char *rel = xasprintf("workloads/%s.jsonl", split);
	char *path = path_join(repo_root, rel);
	struct buf b = BUF_INIT;
	struct werr *err;

	memset(w, 0, sizeof(*w));
	w->split = xstrdup(split);
	if ((err = file_read_max(&b, path, FILE_MAX_DATA)) != NULL) {
		err->exit = WEXIT_INPUT;
		goto out;
	}
	sha256_hex(b.data, b.len, w->digest);
	err = workload_parse(w, b.data, b.len, rel);
out:
	buf_free(&b);
	free(path);
	free(rel);
	return err;
}

/* The request body of one workload line into b (caller frees b->data). */
static void
request_body(struct loadgen_body *b, const json_t *item, const char *model,
    const struct profile *p, int send_tools)
{
	json_t *o = json_object(), *v;
	json_int_t max_tokens;

	json_object_set_new(o, "model", json_string(model));
	json_object_set(o, "messages", json_object_get(item, "messages"));
	v = json_object_get(item, "max_tokens");
	max_tokens = json_is_integer(v) ? json_integer_value(v) : 256;
	json_object_set_new(o, "max_tokens", json_integer(max_tokens));
	json_object_set_new(o, "stream", json_true());
	json_object_set_new(o, "stream_options",
	    json_pack("{s:b}", "include_usage", 1));
	json_object_set_new(o, "temperature", json_real(0));
	if (p->thinking_switch != NULL)
		json_object_set_new(o, "chat_template_kwargs",
		    json_pack("{s:b}", p->thinking_switch, 0));
	if (send_tools && (v = json_object_get(item, "tools")) != NULL)
		json_object_set(o, "tools", v);
	b->data = json_dumps(o, JSON_COMPACT);
	b->len = strlen(b->data);
	b->max_tokens = max_tokens > 0 && max_tokens <= LONG_MAX ?
	    (long)max_tokens : 0;
	json_decref(o);
}


void
bodies_free(struct bodies *b)
{
	size_t i;

	for (i = 0; i < b->ntimed; i++)
		free((char *)b->timed[i].data);
	for (i = 0; i < b->nwarm; i++)
		free((char *)b->warm[i].data);
	free(b->timed);
	free(b->warm);
	free(b->timed_ids);
	free(b->warm_ids);
}

void
bodies_build(struct bodies *b, const struct workload *w, size_t limit,
    size_t warmups, const char *model, const struct profile *p,
    int send_tools)
{
	size_t i;

	memset(b, 0, sizeof(*b));
	b->ntimed = limit != 0 && limit < w->ntimed ? limit : w->ntimed;
	b->nwarm = warmups < w->nwarm ? warmups : w->nwarm;
	b->timed = xcalloc(b->ntimed + 1, sizeof(*b->timed));
	b->warm = xcalloc(b->nwarm + 1, sizeof(*b->warm));
	b->timed_ids = xcalloc(b->ntimed + 1, sizeof(*b->timed_ids));
	b->warm_ids = xcalloc(b->nwarm + 1, sizeof(*b->warm_ids));
	for (i = 0; i < b->ntimed; i++) {
		request_body(&b->timed[i], w->timed[i], model, p, send_tools);
		b->timed_ids[i] = json_string_value(json_object_get(w->timed[i],
		    "id"));
	}
	for (i = 0; i < b->nwarm; i++) {
		request_body(&b->warm[i], w->warm[i], model, p, send_tools);
		b->warm_ids[i] = json_string_value(json_object_get(w->warm[i],
		    "id"));
	}
}


static char *
cpu_model(void)
{
#ifdef __APPLE__
	/* sysctlbyname(3) <sys/sysctl.h>: "Apple M2 Max" on Apple Silicon;
	 * len comes back with the terminating NUL counted. */
	char name[256];
	size_t len = sizeof(name);

	if (sysctlbyname("machdep.cpu.brand_string", name, &len, NULL, 0) == 0)
		return xstrndup(name, len);
	return xstrdup("unknown");
#else
	struct buf b = BUF_INIT;
	struct werr *err;
	char *p, *end, *s = NULL;

	if ((err = file_read(&b, "/proc/cpuinfo")) != NULL) {
		werr_free(err);
		return xstrdup("unknown");
	}
	if (b.len > 0 && (p = strstr(b.data, "model name")) != NULL &&
	    (p = strchr(p, ':')) != NULL) {
		p += 2;
		end = strchr(p, '\n');
		s = end ? xstrndup(p, (size_t)(end - p)) : xstrdup(p);
	}
	buf_free(&b);
	return s != NULL ? s : xstrdup("unknown");
#endif
}

json_t *
provenance_hardware(uint64_t gpu_hint)
{
	uint64_t used = 0, total = 0;
	struct utsname u;
	json_t *o;
	char *cpu = cpu_model();

	werr_free(memsample_system(&used, &total));
	o = json_pack("{s:s, s:I, s:I}", "cpu", cpu,
	    "cpus", (json_int_t)sysconf(_SC_NPROCESSORS_ONLN),
	    "system_memory_bytes", (json_int_t)total);
	json_object_set_new(o, "gpu_working_set_hint_bytes",
	    gpu_hint ? json_integer((json_int_t)gpu_hint) : json_null());
	if (uname(&u) == 0)
		json_object_set_new(o, "arch", json_string(u.machine));
	free(cpu);
	return o;
}

void
campaign_machine_id(char out[17])
{
	struct buf b = BUF_INIT;
	char host[256] = "", hex[SHA256_HEX_LEN + 1];
	uint64_t used = 0, total = 0;
	struct utsname u;
	char *cpu = cpu_model();

	(void)gethostname(host, sizeof(host) - 1);
	werr_free(memsample_system(&used, &total));
	memset(&u, 0, sizeof(u));
	(void)uname(&u);
	buf_printf(&b, "%s\n%s\n%s\n%s\n%llu\n", host, u.sysname, u.machine,
	    cpu, (unsigned long long)total);
	sha256_hex(b.data, b.len, hex);
	memcpy(out, hex, 16);
	out[16] = '\0';
	buf_free(&b);
	free(cpu);
}

json_t *
provenance_file_digest(const char *path)
{
	char hex[SHA256_HEX_LEN + 1];
	struct werr *err;

	if (path == NULL)
		return json_null();
	if ((err = sha256_file_hex(path, hex)) != NULL) {
		werr_free(err);
		return json_null();
	}
	return json_string(hex);
}

json_t *
provenance_repo_digest(const char *repo_root, const char *path)
{
	char *full;
	json_t *v;

	if (path == NULL)
		return json_null();
	full = path[0] == '/' ? xstrdup(path) : path_join(repo_root, path);
	v = provenance_file_digest(full);
	free(full);
	return v;
}

json_t *
provenance_os(void)
{
	struct utsname u;

	if (uname(&u) != 0)
		return json_null();
	return json_pack("{s:s, s:s, s:s}", "name", u.sysname, "release",
	    u.release, "version", u.version);
}

json_t *
provenance_run(const char *repo_root, const char *policy_path,
    const char *machine, uint64_t gpu_hint)
{
	char commit[41] = "";
	struct werr *err;
	json_t *o;
	int dirty = 0;

	o = json_pack("{s:s, s:s}", "warden_version", PACKAGE_VERSION,
	    "machine", machine);
	if ((err = repo_head_state(repo_root, commit, &dirty)) != NULL) {
		json_object_set_new(o, "repo_error", json_string(err->msg));
		werr_free(err);
	} else {
		json_object_set_new(o, "repo_commit", json_string(commit));
		json_object_set_new(o, "repo_dirty", json_boolean(dirty));
	}
	json_object_set_new(o, "policy_sha256", provenance_repo_digest(repo_root,
	    policy_path));
	json_object_set_new(o, "hardware", provenance_hardware(gpu_hint));
	json_object_set_new(o, "os", provenance_os());
	return o;
}
