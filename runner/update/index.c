/*
 * index.c - release dates from the package index's JSON API, over
 * libcurl: GET the policy's update.index.json_url with {package} filled
 * in (PyPI's /pypi/{package}/json shape: "releases": {version: [{
 * "upload_time_iso_8601"}]}, "info": {"version"}). file:// URLs work too,
 * which is how tests serve it. Never prints.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "isotime.h"
#include "update-private.h"
#include "util.h"

#define INDEX_MAX_BYTES (64L * 1024 * 1024)
#define INDEX_TIMEOUT_S 60L

static size_t
collect(char *data, size_t size, size_t n, void *arg)
{
	struct buf *b = arg;

	if (b->len + size * n > (size_t)INDEX_MAX_BYTES)
		return 0;
	buf_add(b, data, size * n);
	return size * n;
}

static char *
index_url(const char *tmpl, const char *package)
{
	const char *at = strstr(tmpl, "{package}");
	char *esc, *url;

	esc = curl_easy_escape(NULL, package, 0);
	if (esc == NULL)
		fatal("out of memory");
	url = xasprintf("%.*s%s%s", (int)(at - tmpl), tmpl, esc, at + 9);
	curl_free(esc);
	return url;
}

static struct werr *
fetch(struct buf *body, const char *url)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct werr *err = NULL;
	long code = 0;
	CURLcode rc;
	CURL *c;

	if ((c = curl_easy_init()) == NULL)
		return werr_new(WEXIT_ENV, "curl: cannot make a handle");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, INDEX_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "warden/" PACKAGE_VERSION);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK)
		err = werr_new(WEXIT_PROBLEM, "package index '%s': %s", url,
		    errbuf[0] ? errbuf : curl_easy_strerror(rc));
	else if (curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK &&
	    code != 0 && code != 200)
		err = werr_new(WEXIT_PROBLEM, "package index '%s': HTTP %ld",
		    url, code);
	curl_easy_cleanup(c);
	return err;
}

struct werr *
update_index_releases(json_t **out, char **latest, const struct policy *policy,
    const char *package)
{
	struct buf body = BUF_INIT;
	json_t *doc, *rel, *files, *f, *dates;
	const char *ver, *t;
	json_error_t jerr;
	struct werr *err;
	int64_t when, first;
	char *url;
	size_t i;

	*out = NULL;
	if (latest != NULL)
		*latest = NULL;
	if (policy->update.json_url == NULL)
		return werr_new(WEXIT_PROBLEM, "no release dates for '%s': policy "
		    "'update.index.json_url' is not set", package);
	url = index_url(policy->update.json_url, package);
	err = fetch(&body, url);
	if (err != NULL)
		goto out;
	doc = json_loadb(buf_cstr(&body), body.len, 0, &jerr);
	rel = json_object_get(doc, "releases");
	if (!json_is_object(rel)) {
		err = werr_new(WEXIT_PROBLEM, "package index '%s': %s", url,
		    doc == NULL ? jerr.text : "no 'releases' object");
		json_decref(doc);
		goto out;
	}
	dates = json_object();
	json_object_foreach(rel, ver, files) {
		first = -1;
		json_array_foreach(files, i, f) {
			t = json_string_value(json_object_get(f, "upload_time_iso_8601"));
			if (t == NULL)
				t = json_string_value(json_object_get(f, "upload_time"));
			if (isotime_to_ms(&when, t) != 0)
				continue;
			if (first == -1 || when < first)
				first = when;
		}
		if (first != -1)
			json_object_set_new(dates, ver, json_integer(
			    (json_int_t)(first / 1000)));
	}
	ver = json_string_value(json_object_get(json_object_get(doc, "info"),
	    "version"));
	if (latest != NULL && ver != NULL)
		*latest = xstrdup(ver);
	json_decref(doc);
	*out = dates;
out:
	free(url);
	buf_free(&body);
	return err;
}
