/*
 * test-campaign-store.c - the campaign tables: runs are unique by id,
 * sweeps go running -> done with journal entries, request rows are written
 * as they come, and an interrupted sweep is discarded with all its rows
 * so a resumed run has no duplicate and no orphan; a sweep keeps the
 * machine's load and warns of a busy machine.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "journal.h"
#include "machine-load.h"
#include "store-campaign.h"
#include "store.h"
#include "util.h"

static char tmpdir[64];
static struct store *store;

static int
setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-cstore.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	assert_null(store_open(&store, tmpdir, "test-cycle", "test"));
	assert_null(store_campaign_ensure(store));
	return 0;
}

static int
teardown(void **state)
{
	char *cmd = xasprintf("rm -rf '%s'", tmpdir);

	store_close(store);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	return 0;
}

static long long
count(const char *sql)
{
	sqlite3_stmt *st = NULL;
	long long n = -1;

	assert_int_equal(sqlite3_prepare_v2(store_db(store), sql, -1, &st,
	    NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static int64_t
begin_sweep(const char *run, int seq)
{
	struct store_sweep_key k;
	json_t *prov = json_pack("{s:s}", "adapter_sha256", "00");
	int64_t id = 0;

	memset(&k, 0, sizeof(k));
	k.run_id = run;
	k.seq = seq;
	k.engine = "e";
	k.model = "m";
	k.split = "chat";
	k.concurrency = 4;
	k.total = 2;
	k.provenance = prov;
	assert_null(store_campaign_sweep_begin(store, &k, &id));
	json_decref(prov);
	return id;
}

static void
add_request(int64_t sweep, size_t idx, int warmup)
{
	struct loadgen_record r;

	memset(&r, 0, sizeof(r));
	r.index = idx;
	r.warmup = warmup;
	r.submit_ns = 1000000000ULL;
	r.first_token_ns = 1012000000ULL;
	r.last_token_ns = 1100000000ULL;
	r.end_ns = 1100100000ULL;
	r.anchor_mono_ns = 1000000000ULL;
	r.anchor_realtime_ns = 1796000000LL * 1000000000LL;
	r.prompt_tokens = 12;
	r.completion_tokens = 64;
	r.usage_source = LOADGEN_USAGE_SERVER;
	r.finish_reason = "stop";
	r.http_status = 200;
	r.outcome = LOADGEN_OK;
	assert_null(store_campaign_request_add(store, sweep, &r, "chat-000"));
}

static void
test_run_ids_are_unique(void **state)
{
	json_t *grid = json_pack("{s:[]}", "points"), *got = NULL;
	json_t *prov = json_object();
	char *machine = NULL, *st = NULL, *id = NULL;
	struct werr *err;
	int found;

	assert_null(store_campaign_run_create(store, "r1", "m1", grid, prov));
	err = store_campaign_run_create(store, "r1", "m1", grid, prov);
	assert_non_null(err);
	assert_int_equal(err->exit, WEXIT_INPUT);
	assert_string_equal(err->msg,
	    "run 'r1' exists; continue it with --resume");
	werr_free(err);
	assert_null(store_campaign_run_get(store, "r1", &found, &machine, &st,
	    &got));
	assert_true(found);
	assert_string_equal(machine, "m1");
	assert_string_equal(st, "running");
	assert_true(json_equal(got, grid));
	assert_null(store_campaign_run_unfinished(store, "m1", &id));
	assert_string_equal(id, "r1");
	free(id);
	assert_null(store_campaign_run_unfinished(store, "other", &id));
	assert_null(id);
	assert_null(store_campaign_run_get(store, "nope", &found, NULL, NULL,
	    NULL));
	assert_false(found);
	free(machine);
	free(st);
	json_decref(got);
	json_decref(grid);
	json_decref(prov);
}

static void
test_sweep_lifecycle_and_journal(void **state)
{
	struct store_sweep_result res;
	struct werr *err;
	int64_t id;
	json_t *arr = NULL, *sw;
	int done;

	id = begin_sweep("r1", 0);
	assert_null(store_campaign_sweep_done(store, "r1", 0, &done));
	assert_false(done);
	add_request(id, 0, 1);
	add_request(id, 0, 0);
	add_request(id, 1, 0);
	assert_int_equal(count("select count(*) from campaign_requests"), 3);
	assert_true(count("select ttft_ms = 12.0 from campaign_requests "
	    "where warmup = 0 and idx = 0") == 1);
	memset(&res, 0, sizeof(res));
	res.outcome = "complete";
	res.completed = 2;
	res.served_model = "Org/M";
	assert_null(store_campaign_sweep_finish(store, id, &res));
	assert_null(store_campaign_sweep_done(store, "r1", 0, &done));
	assert_true(done);
	/* finishing twice is an error: a sweep is done once */
	err = store_campaign_sweep_finish(store, id, &res);
	assert_non_null(err);
	assert_non_null(strstr(err->msg, "is not running"));
	werr_free(err);
	assert_int_equal(count("select count(*) from journal where kind in "
	    "('campaign.sweep.start', 'campaign.sweep.finish') and "
	    "subject = 'e/m/chat/c4'"), 2);
	assert_null(store_campaign_sweeps_json(store, "r1", &arr));
	assert_int_equal(json_array_size(arr), 1);
	sw = json_array_get(arr, 0);
	assert_string_equal(json_string_value(json_object_get(sw, "outcome")),
	    "complete");
	assert_string_equal(json_string_value(json_object_get(sw,
	    "served_model")), "Org/M");
	assert_true(json_is_object(json_object_get(sw, "provenance")));
	json_decref(arr);
}

static void
test_discard_removes_the_interrupted_attempt(void **state)
{
	int64_t id, id2;
	int n;

	id = begin_sweep("r1", 1);
	add_request(id, 0, 0);
	add_request(id, 1, 0);
	assert_null(store_campaign_discard_unfinished(store, "r1", &n));
	assert_int_equal(n, 1);
	assert_int_equal(count("select count(*) from campaign_requests where "
	    "sweep_id not in (select id from campaign_sweeps)"), 0);
	assert_int_equal(count("select count(*) from campaign_sweeps where "
	    "seq = 1"), 0);
	/* the done sweep of seq 0 is untouched */
	assert_int_equal(count("select count(*) from campaign_requests"), 3);
	assert_int_equal(count("select count(*) from journal where kind = "
	    "'campaign.sweep.discard'"), 1);
	/* the new attempt has a new id and attempt number */
	id2 = begin_sweep("r1", 1);
	assert_true(id2 > id);
	assert_int_equal(count("select attempt from campaign_sweeps where "
	    "seq = 1"), 2);
	assert_null(store_campaign_discard_unfinished(store, "r1", &n));
	assert_int_equal(n, 1);
}

/* The machine's load: quiet below its cores at both samples; a sweep
 * measured on a busy machine keeps its load in its provenance and says so
 * in its journal entry. */
static void
test_machine_load_is_kept_and_warned(void **state)
{
	struct store_sweep_result res;
	json_t *now = machine_load_now(), *busy, *quiet;
	char *why;
	int64_t id;

	assert_non_null(now);	/* Linux and macOS have getloadavg(3) */
	assert_true(json_number_value(json_object_get(now, "load1")) >= 0);
	json_decref(now);
	quiet = machine_load_span(json_pack("{s:f}", "load1", 0.0),
	    json_pack("{s:f}", "load1", 0.0));
	assert_true(json_is_true(json_object_get(quiet, "quiet")));
	assert_null(machine_load_warning(quiet));
	busy = machine_load_span(json_pack("{s:f}", "load1", 0.0),
	    json_pack("{s:f}", "load1", 1e6));
	assert_true(json_is_false(json_object_get(busy, "quiet")));
	why = machine_load_warning(busy);
	assert_non_null(why);
	assert_non_null(strstr(why, "load 0.0 and 1000000.0 on "));
	free(why);
	now = machine_load_span(NULL, NULL);
	assert_null(json_object_get(now, "quiet"));	/* not known */
	assert_null(machine_load_warning(now));
	json_decref(now);
	now = json_pack("{s:[]}", "points");
	assert_null(store_campaign_run_create(store, "r-load", "m1", now,
	    quiet));
	json_decref(now);
	id = begin_sweep("r-load", 0);
	memset(&res, 0, sizeof(res));
	res.outcome = "complete";
	res.load = busy;
	assert_null(store_campaign_sweep_finish(store, id, &res));
	assert_int_equal(count("select json_extract(provenance, "
	    "'$.machine_load.end.load1') = 1e6 from campaign_sweeps where "
	    "run_id = 'r-load'"), 1);
	assert_int_equal(count("select count(*) from journal where kind = "
	    "'campaign.sweep.finish' and json_extract(body, '$.warning') like "
	    "'the machine was not quiet while it measured: load 0.0 and "
	    "1000000.0 on %'"), 1);
	id = begin_sweep("r-load", 1);
	res.load = quiet;
	assert_null(store_campaign_sweep_finish(store, id, &res));
	assert_int_equal(count("select count(*) from journal where kind = "
	    "'campaign.sweep.finish' and subject = 'e/m/chat/c4' and "
	    "json_extract(body, '$.run_id') = 'r-load' and json_extract(body, "
	    "'$.warning') is null"), 1);
	json_decref(busy);
	json_decref(quiet);
}

static void
test_engine_seconds_sum_finished_sweeps(void **state)
{
	struct store_sweep_result res;
	json_t *grid = json_pack("{s:[]}", "points"), *prov = json_object();
	double secs = -1;
	int64_t a, b;

	assert_null(store_campaign_run_create(store, "r9", "m1", grid, prov));
	json_decref(grid);
	json_decref(prov);
	a = begin_sweep("r9", 0);
	b = begin_sweep("r9", 1);
	memset(&res, 0, sizeof(res));
	res.outcome = "complete";
	assert_null(store_campaign_sweep_finish(store, a, &res));
	/* Pretend the finished sweep ran 90 s; the running one counts not. */
	assert_int_equal(sqlite3_exec(store_db(store), "UPDATE campaign_sweeps "
	    "SET started = '2026-12-01T10:00:00.000Z', "
	    "finished = '2026-12-01T10:01:30.000Z' WHERE seq = 0 AND run_id = 'r9'",
	    NULL, NULL, NULL), SQLITE_OK);
	assert_null(store_campaign_engine_seconds(store, "r9", "e", &secs));
	assert_true(secs > 89.99 && secs < 90.01);
	assert_null(store_campaign_engine_seconds(store, "r9", "other", &secs));
	assert_true(secs == 0);
	(void)b;
}

static void
test_run_finish_and_chain(void **state)
{
	char *id = NULL;
	int64_t broken = -1, total = 0;
	char *why = NULL;

	assert_null(store_campaign_run_finish(store, "r1"));
	assert_null(store_campaign_run_unfinished(store, "m1", &id));
	assert_null(id);
	assert_null(journal_verify(store, &broken, &why, &total));
	assert_int_equal(broken, 0);
	assert_true(total >= 7);
	free(why);
	{
		sqlite3_stmt *st = NULL;

		assert_int_equal(sqlite3_prepare_v2(store_db(store),
		    "pragma integrity_check", -1, &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(st, 0),
		    "ok");
		sqlite3_finalize(st);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_ids_are_unique),
		cmocka_unit_test(test_sweep_lifecycle_and_journal),
		cmocka_unit_test(test_discard_removes_the_interrupted_attempt),
		cmocka_unit_test(test_run_finish_and_chain),
		cmocka_unit_test(test_engine_seconds_sum_finished_sweeps),
		cmocka_unit_test(test_machine_load_is_kept_and_warned),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
