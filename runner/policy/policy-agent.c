/*
 * policy-agent.c - policy's "agent" object: the presets (a tested argv,
 * environment and settings for Claude Code and for Codex CLI), the
 * command template's placeholders and their escapes, and the rules
 * between the agent's fields that the schema cannot say.
 *
 * A preset fills agent.command when policy gives none, adds the names
 * of the variables the program needs to agent.env, and sets the
 * variables that keep it quiet offline (agent.env_set). agent.gateway,
 * agent.model, agent.max_turns, agent.max_cost_usd and agent.api_retries
 * go where each program takes them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "util.h"

static const char *const placeholders[] = {
	"prompt_file", "problem_file", "worktree", "run_dir", "home", "tmp",
	"task", "engine", "incident", NULL,
};

#define PROMPT "Read the task in {prompt_file} and do it."

/* Variables passed through when set in warden's environment. */
static const char *const claude_env[] = {
	"PATH", "LANG", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
	"CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL",
	"CLAUDE_CODE_MAX_RETRIES", "API_TIMEOUT_MS", NULL,
};
static const char *const codex_env[] = {
	"PATH", "LANG", "OPENAI_API_KEY", "CODEX_API_KEY", NULL,
};
/* Variables set to these values: no telemetry, no update check, no
 * traffic but the model's. */
static const char *const claude_set[] = {
	"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1",
	"DISABLE_ERROR_REPORTING=1", "DISABLE_BUG_COMMAND=1",
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", NULL,
};

int
policy_agent_placeholder_known(const char *name, size_t n)
{
	size_t i;

	for (i = 0; placeholders[i] != NULL; i++)
		if (strlen(placeholders[i]) == n &&
		    strncmp(placeholders[i], name, n) == 0)
			return 1;
	return 0;
}

struct werr *
policy_agent_expand(struct buf *out, const char *tmpl,
    const char *(*lookup)(void *arg, const char *name, size_t n), void *arg)
{
	const char *s = tmpl, *close;

	for (; *s != '\0'; s++) {
		const char *v;
		size_t n;

		if ((s[0] == '{' && s[1] == '{') || (s[0] == '}' && s[1] == '}')) {
			buf_add(out, s, 1);
			s++;
			continue;
		}
		if (*s != '{') {
			buf_add(out, s, 1);
			continue;
		}
		if ((close = strchr(s, '}')) == NULL)
			return werr_new(WEXIT_INPUT, "has an unterminated "
			    "'{' in '%s' (write '{{' for a literal '{')", tmpl);
		n = (size_t)(close - s - 1);
		v = policy_agent_placeholder_known(s + 1, n) ?
		    lookup(arg, s + 1, n) : NULL;
		if (v == NULL)
			return werr_new(WEXIT_INPUT, "uses unknown "
			    "placeholder '%.*s' (known: {prompt_file} "
			    "{problem_file} {worktree} {run_dir} {home} {tmp} "
			    "{task} {engine} {incident}; write '{{' and '}}' "
			    "for literal braces)", (int)(n + 2), s);
		buf_puts(out, v);
		s = close;
	}
	return NULL;
}

static const char *
lookup_any(void *arg, const char *name, size_t n)
{
	(void)arg;
	(void)name;
	(void)n;
	return "";
}

static void
add(struct strlist *l, const char *s)
{
	l->v = xrealloc(l->v, (l->n + 2) * sizeof(*l->v));
	l->v[l->n++] = xstrdup(s);
	l->v[l->n] = NULL;
}

/* add(l, s) where s is a string xasprintf made */
static void
add_owned(struct strlist *l, char *s)
{
	add(l, s);
	free(s);
}

/* s with every brace doubled: a literal in the command template. */
static char *
escape_braces(const char *s)
{
	struct buf b = BUF_INIT;

	for (; *s != '\0'; s++) {
		if (*s == '{' || *s == '}')
			buf_add(&b, s, 1);
		buf_add(&b, s, 1);
	}
	buf_puts(&b, "");
	return buf_detach(&b);
}

static void
claude_command(struct policy *p)
{
	struct strlist *c = &p->agent.command;

	add(c, "claude");
	add(c, "-p");
	/* Every message as it comes, into agent.log. */
	add(c, "--output-format");
	add(c, "stream-json");
	add(c, "--verbose");
	add(c, "--permission-mode");
	add(c, "acceptEdits");
	/* -p asks nobody: what it may use must be allowed up front. */
	add(c, "--allowedTools");
	add(c, "Bash,Read,Edit,Write,Glob,Grep");
	add(c, "--add-dir");
	add(c, "{run_dir}");
	if (p->agent.model != NULL) {
		add(c, "--model");
		add(c, p->agent.model);
	}
	if (p->agent.max_turns > 0) {
		add(c, "--max-turns");
		add_owned(c, xasprintf("%d", p->agent.max_turns));
	}
	if (p->agent.max_cost_usd > 0) {
		add(c, "--max-budget-usd");
		add_owned(c, xasprintf("%.2f", p->agent.max_cost_usd));
	}
	/* --add-dir takes any number of directories: the prompt after --. */
	add(c, "--");
	add(c, PROMPT);
}

static void
codex_command(struct policy *p)
{
	struct strlist *c = &p->agent.command;

	add(c, "codex");
	add(c, "exec");
	add(c, "--color");
	add(c, "never");
	/* warden's sandbox is the boundary: Codex's own cannot be built
	 * inside it (it needs a writable /tmp and user namespaces). */
	add(c, "--sandbox");
	add(c, "danger-full-access");
	add(c, "--skip-git-repo-check");
	add(c, "-c");
	add(c, "check_for_update_on_startup=false");
	/* a login shell would reset PATH from /etc/profile: warden and the
	 * tools agent.env's PATH names would be gone */
	add(c, "-c");
	add(c, "allow_login_shell=false");
	if (p->agent.gateway != NULL) {
		char *url = escape_braces(p->agent.gateway);
		char *retries = p->agent.api_retries >= 0 ? xasprintf(
		    ", request_max_retries=%d, stream_max_retries=%d",
		    p->agent.api_retries, p->agent.api_retries) : xstrdup("");

		add(c, "-c");
		add(c, "model_provider=\"warden-gateway\"");
		add(c, "-c");
		add_owned(c, xasprintf("model_providers.warden-gateway="
		    "{{name=\"gateway\", base_url=\"%s\", "
		    "env_key=\"OPENAI_API_KEY\", wire_api=\"responses\"%s}}",
		    url, retries));
		free(url);
		free(retries);
	}
	if (p->agent.model != NULL) {
		add(c, "--model");
		add(c, p->agent.model);
	}
	add(c, "--");
	add(c, PROMPT);
}

void
policy_agent_load(struct policy *p, const json_t *o)
{
	const json_t *v;
	const char *const *names = NULL, *const *set = NULL;
	size_t i;

	strlist_from_json(&p->agent.command, json_object_get(o, "command"));
	p->agent.command_given = p->agent.command.n > 0;
	strlist_from_json(&p->agent.env, json_object_get(o, "env"));
	p->agent.env_set.v = xcalloc(1, sizeof(char *));
	p->agent.env_set.n = 0;
#define STR(k) (json_is_string(json_object_get(o, k)) ? \
	xstrdup(json_string_value(json_object_get(o, k))) : NULL)
	p->agent.preset = STR("preset");
	p->agent.gateway = STR("gateway");
	p->agent.model = STR("model");
#undef STR
	p->agent.max_turns = (int)json_integer_value(json_object_get(o,
	    "max_turns"));
	p->agent.max_cost_usd = json_number_value(json_object_get(o,
	    "max_cost_usd"));
	v = json_object_get(o, "api_retries");
	p->agent.api_retries = v != NULL ? (int)json_integer_value(v) : -1;
	if (p->agent.preset == NULL)
		return;
	if (strcmp(p->agent.preset, "claude-code") == 0) {
		if (p->agent.command.n == 0)
			claude_command(p);
		names = claude_env;
		set = claude_set;
		if (p->agent.gateway != NULL)
			add_owned(&p->agent.env_set, xasprintf(
			    "ANTHROPIC_BASE_URL=%s", p->agent.gateway));
		if (p->agent.api_retries >= 0)
			add_owned(&p->agent.env_set, xasprintf(
			    "CLAUDE_CODE_MAX_RETRIES=%d", p->agent.api_retries));
	} else if (strcmp(p->agent.preset, "codex") == 0) {
		if (p->agent.command.n == 0)
			codex_command(p);
		names = codex_env;
	}
	for (i = 0; names != NULL && names[i] != NULL; i++)
		if (!strlist_contains(&p->agent.env, names[i]))
			add(&p->agent.env, names[i]);
	for (i = 0; set != NULL && set[i] != NULL; i++)
		add(&p->agent.env_set, set[i]);
}

void
policy_agent_free(struct policy *p)
{
	strlist_free(&p->agent.command);
	strlist_free(&p->agent.env);
	strlist_free(&p->agent.env_set);
	free(p->agent.preset);
	free(p->agent.gateway);
	free(p->agent.model);
}

long
policy_agent_url_port(const char *url)
{
	const char *host = strstr(url, "://"), *end, *colon;
	long port = str_startswith(url, "https://") ? 443 : 80;

	if (host == NULL)
		return port;
	host += 3;
	end = host + strcspn(host, "/?#");
	if (*host == '[')	/* an IPv6 address: its port follows ']' */
		host = memchr(host, ']', (size_t)(end - host)) ?
		    memchr(host, ']', (size_t)(end - host)) : host;
	colon = memchr(host, ':', (size_t)(end - host));
	if (colon != NULL)
		port = strtol(colon + 1, NULL, 10);
	return port;
}

void
policy_agent_check(const struct policy *p, const char *name,
    const char *text, size_t len, struct problems *probs)
{
	struct buf b = BUF_INIT;
	struct werr *err;
	size_t i;

	if (p->agent.command.n == 0)
		problems_add_field(probs, name, text, len, "agent.command",
		    "is needed when 'agent.preset' is not set");
	for (i = 0; i < p->agent.command.n; i++) {
		buf_reset(&b);
		if ((err = policy_agent_expand(&b, p->agent.command.v[i],
		    lookup_any, NULL)) != NULL) {
			problems_add_field(probs, name, text, len,
			    "agent.command", "%s", err->msg);
			werr_free(err);
		}
	}
	buf_free(&b);
	if (p->agent.gateway != NULL && strcmp(p->agent.network, "https") == 0
	    && policy_agent_url_port(p->agent.gateway) != 443)
		problems_add_field(probs, name, text, len, "agent.gateway",
		    "is on port %ld, which the network rule \"https\" (port "
		    "443 only) does not reach: set 'agent.network' to \"host\"",
		    policy_agent_url_port(p->agent.gateway));
	if (p->agent.preset != NULL && strcmp(p->agent.preset, "codex") == 0 &&
	    (p->agent.max_turns > 0 || p->agent.max_cost_usd > 0))
		problems_add_field(probs, name, text, len, p->agent.max_turns > 0 ?
		    "agent.max_turns" : "agent.max_cost_usd", "is not supported "
		    "by Codex CLI (preset \"codex\"); agent.time_limit_s bounds it");
	if (p->agent.preset == NULL && (p->agent.gateway != NULL ||
	    p->agent.model != NULL || p->agent.max_turns > 0 ||
	    p->agent.max_cost_usd > 0 || p->agent.api_retries >= 0))
		problems_add_field(probs, name, text, len, "agent.preset",
		    "is needed for 'agent.gateway', 'agent.model', "
		    "'agent.max_turns', 'agent.max_cost_usd' and "
		    "'agent.api_retries' (a hand-written agent.command says "
		    "them itself)");
	if (p->agent.preset != NULL && p->agent.command_given &&
	    ((p->agent.gateway != NULL && strcmp(p->agent.preset, "codex") == 0)
	    || p->agent.max_turns > 0 || p->agent.max_cost_usd > 0 ||
	    p->agent.model != NULL))
		problems_add_field(probs, name, text, len, "agent.command",
		    "replaces the preset's argv, where 'agent.model', "
		    "'agent.max_turns', 'agent.max_cost_usd' (and Codex's "
		    "'agent.gateway') go: drop one or the other");
}
