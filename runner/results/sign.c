/*
 * sign.c - sign and verify a manifest through `ssh-keygen -Y`, run by
 * spawn.h in a private temporary directory that is removed afterwards.
 * See sign.h. Never prints.
 */
#include "config.h"

#include <sys/wait.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawn.h"
#include "util.h"
#include "results/sign.h"
#include "results/snapshot.h"

#define KEYGEN_TIMEOUT_MS 30000

struct scratch {
	char dir[256];
	char *msg, *sig, *log, *out, *signers;
};

static struct werr *
scratch_open(struct scratch *t)
{
	const char *tmp = getenv("TMPDIR");

	memset(t, 0, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "%s/warden-sign.XXXXXX",
	    tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
	if (mkdtemp(t->dir) == NULL)
		return werr_errno("create temporary directory", t->dir);
	t->msg = path_join(t->dir, "manifest.json");
	t->sig = path_join(t->dir, "manifest.json.sig");
	t->log = path_join(t->dir, "ssh-keygen.log");
	t->out = path_join(t->dir, "ssh-keygen.out");
	t->signers = path_join(t->dir, "allowed_signers");
	return NULL;
}

static void
scratch_close(struct scratch *t)
{
	(void)unlink(t->msg);
	(void)unlink(t->sig);
	(void)unlink(t->log);
	(void)unlink(t->out);
	(void)unlink(t->signers);
	(void)rmdir(t->dir);
	free(t->msg);
	free(t->sig);
	free(t->log);
	free(t->out);
	free(t->signers);
}

struct werr *
signers_read_file(struct signers *s, const char *path)
{
	struct werr *err;

	s->name = xstrdup(path);
	buf_init(&s->text);
	if ((err = file_read_max(&s->text, path, FILE_MAX_CONFIG)) != NULL) {
		err->exit = WEXIT_INPUT;
		signers_free(s);
		return werr_wrap(err, "allowed_signers");
	}
	return NULL;
}

void
signers_free(struct signers *s)
{
	free(s->name);
	buf_free(&s->text);
	memset(s, 0, sizeof(*s));
}

/* Run argv; *status its wait status; the log's last line in *why. */
static struct werr *
keygen(char *const *argv, struct scratch *t, int *status, char **why)
{
	struct spawn_opts o;
	struct buf log = BUF_INIT;
	struct werr *err;
	int timed_out = 0;
	size_t n;

	memset(&o, 0, sizeof(o));
	o.argv = argv;
	o.log_path = t->log;
	o.stdout_path = t->out;
	*why = NULL;
	if ((err = spawn_run(&o, KEYGEN_TIMEOUT_MS, 1000, status,
	    &timed_out)) != NULL)
		return werr_wrap(err, "ssh-keygen (from OpenSSH) is needed for "
		    "snapshot signatures");
	werr_free(file_read(&log, t->log));
	n = log.len;
	while (n > 0 && (log.data[n - 1] == '\n' || log.data[n - 1] == '\r'))
		n--;
	if (timed_out)
		*why = xstrdup("ssh-keygen took too long (a passphrase prompt?)");
	else if (n > 0) {
		log.data[n] = '\0';
		*why = xstrdup(strrchr(log.data, '\n') ?
		    strrchr(log.data, '\n') + 1 : log.data);
	}
	buf_free(&log);
	return NULL;
}

struct werr *
sign_manifest(struct buf *sig, const char *key_path, const char *text,
    size_t len)
{
	char *argv[] = { "ssh-keygen", "-q", "-Y", "sign", "-f",
	    (char *)key_path, "-n", SNAPSHOT_NAMESPACE, NULL, NULL };
	struct scratch t;
	struct werr *err;
	char *why = NULL;
	int status = 0;

	if ((err = scratch_open(&t)) != NULL)
		return err;
	argv[8] = t.msg;
	if ((err = file_write_atomic(t.msg, text, len)) != NULL ||
	    (err = keygen(argv, &t, &status, &why)) != NULL)
		goto out;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    file_read(sig, t.sig) != NULL) {
		err = werr_new(WEXIT_ENV, "cannot sign the manifest with key "
		    "'%s': %s", key_path, why ? why : "ssh-keygen failed");
		goto out;
	}
out:
	free(why);
	scratch_close(&t);
	return err;
}

struct werr *
sign_keygen(struct buf *signer_line, const char *key_path,
    const char *principal)
{
	char *pub = xasprintf("%s.pub", key_path);
	char *argv[] = { "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
	    (char *)principal, "-f", (char *)key_path, NULL };
	struct buf key = BUF_INIT;
	struct scratch t;
	struct werr *err;
	char *why = NULL;
	int status = 0;

	if ((err = scratch_open(&t)) != NULL)
		goto out;
	err = keygen(argv, &t, &status, &why);
	scratch_close(&t);
	if (err == NULL && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
		err = werr_new(WEXIT_ENV, "cannot make a signing key '%s': %s",
		    key_path, why ? why : "ssh-keygen failed");
	if (err == NULL && (err = file_read_max(&key, pub,
	    FILE_MAX_CONFIG)) == NULL) {
		buf_printf(signer_line, "%s namespaces=\"%s\" %.*s\n",
		    principal, SNAPSHOT_NAMESPACE, (int)strcspn(buf_cstr(&key),
		    "\r\n"), buf_cstr(&key));
	}
out:
	buf_free(&key);
	free(why);
	free(pub);
	return err;
}

struct werr *
sign_verify(int *ok, char **detail, const struct signers *signers,
    const char *text, size_t len, const char *sig, size_t siglen)
{
	char *find[] = { "ssh-keygen", "-Y", "find-principals", "-s", NULL,
	    "-f", NULL, NULL };
	char *check[] = { "sh", "-c", "exec ssh-keygen -Y verify -f \"$1\" "
	    "-I \"$2\" -n " SNAPSHOT_NAMESPACE " -s \"$3\" < \"$4\"", "sh",
	    NULL, NULL, NULL, NULL, NULL };
	struct buf out = BUF_INIT;
	struct scratch t;
	struct werr *err;
	char *why = NULL, *principal = NULL;
	int status = 0;

	*ok = 0;
	*detail = NULL;
	if ((err = scratch_open(&t)) != NULL)
		return err;
	find[4] = t.sig;
	find[6] = check[4] = t.signers;
	if ((err = file_write_atomic(t.signers, signers->text.data,
	    signers->text.len)) != NULL ||
	    (err = file_write_atomic(t.msg, text, len)) != NULL ||
	    (err = file_write_atomic(t.sig, sig, siglen)) != NULL ||
	    (err = keygen(find, &t, &status, &why)) != NULL)
		goto out;
	werr_free(file_read(&out, t.out));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || out.len == 0) {
		*detail = xasprintf("no key of '%s' made the signature%s%s",
		    signers->name, why ? ": " : "", why ? why : "");
		goto out;
	}
	principal = xstrndup(out.data, strcspn(out.data, "\r\n"));
	check[5] = principal;
	check[6] = t.sig;
	check[7] = t.msg;
	free(why);
	why = NULL;
	(void)unlink(t.log);
	if ((err = keygen(check, &t, &status, &why)) != NULL)
		goto out;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		*ok = 1;
		*detail = principal;
		principal = NULL;
	} else
		*detail = xasprintf("the signature does not verify%s%s",
		    why ? ": " : "", why ? why : "");
out:
	free(principal);
	free(why);
	buf_free(&out);
	scratch_close(&t);
	return err;
}
