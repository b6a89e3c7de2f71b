/*
 * engine.h - one engine server's life: started from its adapter for a
 * (model, split, concurrency), on a free port of 127.0.0.1, with its own
 * HOME and caches, its output in a log file; ready when its health path
 * answers 200 and its /v1/models lists the model the profile names.
 *
 * An engine that fails is an outcome, not an error: engine_start() returns
 * an error only when warden itself cannot proceed (no directory, no
 * memory); otherwise e->state says what happened (ready; start_failed
 * when its program cannot be executed; not_ready when it exits before it
 * answers, with its exit status and log tail, or does not answer in time;
 * server_crash when it exits after it was ready; wrong_model;
 * port_conflict; setup_failed). The process is always stopped and reaped
 * by engine_stop()/engine_free().
 *
 * Around the server run the adapter's steps: serve.pre_start before each
 * start (a failing step is setup_failed, unless the step may fail) and
 * serve.stop after each stop, each through spawn.h with a timeout, their
 * output in the server's log. {scratch} is an empty directory made for
 * each start and removed after the stop.
 * Never prints.
 */
#ifndef WARDEN_ENGINE_H
#define WARDEN_ENGINE_H

#include <sys/types.h>

#include <stdint.h>

#include "adapter.h"
#include "buf.h"
#include "error.h"
#include "spawn.h"

enum engine_state {
	ENGINE_STARTING = 0,	/* "starting" */
	ENGINE_READY,		/* "ready" */
	ENGINE_CRASHED,		/* "server_crash": exited or killed after
				   it was ready */
	ENGINE_NOT_READY,	/* "not_ready": exited before it answered,
				   or no healthy answer in time */
	ENGINE_WRONG_MODEL,	/* "wrong_model": serves another model */
	ENGINE_PORT_CONFLICT,	/* "port_conflict": port not its own */
	ENGINE_SETUP_FAILED,	/* "setup_failed": a pre_start step failed */
	ENGINE_STOPPED,		/* "stopped" */
	ENGINE_START_FAILED,	/* "start_failed": its program could not be
				   executed */
};

struct engine_params {
	const struct adapter *adapter;
	const struct profile *profile;
	const char *split;
	unsigned concurrency;
	const char *repo_root;	/* the tree the adapter comes from: {repo} */
	/* Non-NULL: the adapter is content no maintainer approved. The
	 * server and its steps run in the sandbox (sandbox/sandbox.h) with
	 * this repository (the maintainer's) hidden; repo_root, env_dir
	 * (and the Python its venv names) and the weights read-only;
	 * {home}, {scratch} and the log's folder writable; the host's
	 * network (it serves on loopback); and an environment of its own:
	 * PATH without hidden folders, the locale, HOME, TMPDIR ({scratch})
	 * and the adapter's serve.env, nothing else of warden's. */
	const char *sandbox_repo;
	/* With sandbox_repo: the folder of this unreviewed run's own
	 * (sandbox/scratch.h), the only place it may write and that no
	 * approved run uses: {home} is own_dir/home, a copy of
	 * env_dir/home made at the first start; {scratch} own_dir/scratch;
	 * {log_dir} own_dir/logs. env_dir is then read-only to it. */
	const char *own_dir;
	const char *env_dir;	/* .warden/envs/ENGINE (made if missing) */
	/* The server's log file (dirs made), opened once by warden
	 * without following a link and written only through that
	 * descriptor; its folder is never writable by the server. */
	const char *log_path;
	double ready_timeout_s;	/* 0: the adapter's, else 600 */
	unsigned stop_grace_ms;	/* 0: 10 s */
	int port;		/* 0: pick a free ephemeral port */
	/* Called about every 50 ms while waiting for the engine to answer,
	 * with the seconds waited; a non-zero return abandons the start
	 * (the engine is stopped, its state is "stopped"). May be NULL. */
	int (*on_wait)(void *arg, double waited_s);
	void *wait_arg;
};

struct launch;

struct engine {
	struct spawn_proc proc;
	enum engine_state state;
	int port;
	char *base_url;		/* "http://127.0.0.1:PORT" */
	char *log_path;
	int log_fd;		/* the log, open for reading and appending:
				   the steps and the server write to it,
				   warden reads its tail through it */
	char *model;		/* the id the profile asks for */
	char *served_model;	/* what /v1/models listed (NULL: not asked) */
	char *detail;		/* what went wrong, with the log tail */
	char *argv_text;	/* the expanded command line, for records */
	char *argv_provenance;	/* the same, for what is published: the
				   bench's root as ".", the port as
				   "{port}" (no local path, no port) */
	uint64_t started_ns, ready_ns;
	unsigned stop_grace_ms;
	/* hang detection: the log file's growth */
	off_t log_size;
	uint64_t log_changed_ns;
	struct launch *launch;	/* what the stop steps need; NULL: none */
	int stopped;		/* stop steps ran and {scratch} is gone */
};

/* The variables of an argv template (see adapter.h for the names). */
struct engine_vars {
	const char *port, *host, *model, *model_path, *model_dir, *model_repo,
	    *hf_id, *models_dir, *ctx, *home, *env_dir, *scratch, *log_dir,
	    *adapter_dir, *repo, *concurrency, *split;
};

/* Where model weights live: {models_dir}, REPO/.warden/models. A
 * profile's relative 'file' and 'dir' are found there. */
#define ENGINE_MODELS_DIR ".warden/models"

/*
 * Expand {name} placeholders of tmpl into out. An unknown name or an
 * unterminated brace is an error (WEXIT_INPUT) naming it; a known name
 * whose value is NULL expands to "".
 */
struct werr *engine_expand(struct buf *out, const char *tmpl,
    const struct engine_vars *vars);

/* A free TCP port on 127.0.0.1 (bound, then released), or an error;
 * inside a sandboxed agent's own campaign, one of its range
 * (sandbox.h: SANDBOX_PORTS_ENV). engine-port.c */
struct werr *engine_free_port(int *port);
/* n free ports in a row on 127.0.0.1 (n <= SANDBOX_PORTS_MAX), between
 * the services' ports and the ephemeral ones: for a sandboxed agent's
 * own engines. */
struct werr *engine_port_range(int *lo, int *hi, int n);

struct werr *engine_start(struct engine **out, const struct engine_params *p);

/* Is the server still running? On exit it becomes ENGINE_CRASHED with
 * its exit status or signal and the log tail in detail. */
int engine_alive(struct engine *e);

/* Nanoseconds since the log file last grew (checked now). */
uint64_t engine_log_quiet_ns(struct engine *e, uint64_t now_ns);

/* Stop the server's whole process group and reap it; then run the
 * adapter's stop steps once and remove {scratch}. */
struct werr *engine_stop(struct engine *e);
void engine_free(struct engine *e);

const char *engine_state_name(enum engine_state state);

/*
 * The sandbox programs of content no maintainer approved run in (the
 * engines and steps of an unreviewed change's smoke campaign, triage's
 * scratch builds), as policy agent.sandbox (mode) says: *kind the
 * sandbox's name ("bubblewrap", "sandbox-exec"), or NULL for none: "off",
 * or "best-effort" where none works here. "required" where none works is
 * an error (WEXIT_ENV) naming what for (e.g. "engines of unreviewed
 * changes"). Runs the sandbox's probe (sandbox/sandbox.h).
 */
struct werr *engine_sandbox_decide(const char **kind, const char *mode,
    const char *what);

/* The last max_bytes of a log file, from a line start where possible,
 * as valid UTF-8. engine_log_tail_fd reads the log open as fd (name for
 * errors): a log an unreviewed program wrote is never reopened by path. */
void engine_log_tail(struct buf *out, const char *path, size_t max_bytes);
void engine_log_tail_fd(struct buf *out, int fd, const char *name,
    size_t max_bytes);

#endif
