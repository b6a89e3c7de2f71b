/*
 * instructions.c - the example instructions for the maintainer agent
 * (Claude Code, Codex CLI) that `warden init` writes to policy/agent-instructions.md.
 * The same text is this repository's policy/agent-instructions.md; a test
 * (t6004) keeps the two identical. Data only: nothing here runs anything.
 */
#include "config.h"

#include "agent.h"

static const char instructions_text[] =
"# Instructions for the maintainer agent (Claude Code, Codex CLI)\n"
"\n"
"You are fixing a benchmark repository laid out for warden. warden started you\n"
"in a git worktree of the official branch and will trust nothing you say: after\n"
"you exit it takes the diff of this worktree against the official tip, passes it\n"
"through the write allowlist, smoke-tests the engines it touches, and queues it\n"
"for a human maintainer to review. Your task (the problem, the failing cells,\n"
"the version diff, log tails) is in the file warden named when it started you.\n"
"\n"
"## What you may change\n"
"\n"
"Only files the allowlist in `policy/warden.json` names, by default:\n"
"\n"
"- `adapters/engines/NAME.json` and files under `adapters/engines/NAME/`\n"
"  (how an engine is installed and served: `source`, `pin`/`pins`, `serve.argv`,\n"
"  `serve.env`, `serve.splits`);\n"
"- `adapters/profiles/MODEL.json` (which model id each engine serves).\n"
"\n"
"Scripts may carry the executable bit only where policy's `executable` globs\n"
"say (by default `adapters/engines/*/*.sh`). Everything else is refused whole:\n"
"`policy/`, `runner/`, `allowlist/`, `workloads/`, `tests/`, `ci/`, `results/`,\n"
"`journals/`, `.gitignore`, `.gitattributes`. No symlinks, no submodules, no\n"
"binary files.\n"
"\n"
"## What you must not do\n"
"\n"
"- Do not write outside this worktree, except `$HOME` and `$TMPDIR`, which\n"
"  warden made for you and throws away. The sandbox refuses other writes.\n"
"- Do not touch `.git` (this worktree's `.git` file, the repository's hooks,\n"
"  config or refs), do not commit, do not create branches or tags: leave your\n"
"  change uncommitted in the working tree. A run that moves a ref or writes\n"
"  `.git` is quarantined, and none of its work is kept.\n"
"- Do not change how results are computed (workloads, scoring, gates): those\n"
"  are the maintainers' and outside the allowlist.\n"
"\n"
"## How to check your change\n"
"\n"
"Run commands in this worktree with your shell tool. Lint what you edited:\n"
"\n"
"    warden --repo . lint\n"
"\n"
"Smoke-test one engine with a few prompts at concurrency 1 (the store and\n"
"the logs go to `.warden/` inside this worktree, which git ignores; the\n"
"engine serves on a port warden set aside for you):\n"
"\n"
"    warden --repo . campaign --engine NAME --limit 4 --concurrency 1\n"
"\n"
"Read the engine's log under `.warden/logs/` when a sweep is not `complete`.\n"
"Either way warden runs the same smoke campaign itself, before and after\n"
"your change, and attaches both to the review.\n"
"\n"
"## When you are done\n"
"\n"
"Exit. Say in a few lines what you changed and why; the maintainer reads it\n"
"with the diff. If you could not fix the problem, change nothing and say why.\n";

const char *
agent_instructions_default_text(void)
{
	return instructions_text;
}
