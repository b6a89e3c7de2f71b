/*
 * store-migrations.c - the store's schema as forward migrations, in
 * order. Append only: never edit a migration that has shipped, never
 * reorder them (PRAGMA user_version counts the ones applied). A module's
 * schema text lives in its own store-AREA.h.
 */
#include "config.h"

#include "store-campaign.h"
#include "store-official.h"
#include "store-private.h"
#include "store-update.h"
#include "agent/store-agent.h"
#include "cycle/store-cycle.h"
#include "regress/store-regress.h"
#include "results/store-results.h"
#include "triage/store-triage.h"

const char *const store_migrations[] = {
	/* 1: the journal and a small key/value table. */
	"CREATE TABLE journal ("
	"  seq INTEGER PRIMARY KEY,"
	"  time TEXT NOT NULL,"
	"  cycle TEXT NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  subject TEXT NOT NULL DEFAULT '',"
	"  body TEXT NOT NULL,"
	"  prev_hash TEXT NOT NULL,"
	"  hash TEXT NOT NULL"
	");"
	"CREATE INDEX journal_by_cycle ON journal(cycle, seq);"
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal"
	"  BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;"
	"CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal"
	"  BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;",

	/* 2: the review queue: one row per submitted change, its gate
	 * result, the decision, and evidence attached by other commands. */
	"CREATE TABLE reviews ("
	"  id INTEGER PRIMARY KEY,"
	"  status TEXT NOT NULL DEFAULT 'pending'"
	"    CHECK (status IN ('pending', 'approved', 'rejected')),"
	"  source TEXT NOT NULL"
	"    CHECK (source IN ('agent', 'community', 'triage')),"
	"  author TEXT NOT NULL,"
	"  note TEXT NOT NULL DEFAULT '',"
	"  created TEXT NOT NULL,"
	"  base_commit TEXT NOT NULL,"
	"  commit_id TEXT NOT NULL,"
	"  patch TEXT NOT NULL,"
	"  gate TEXT NOT NULL,"
	"  decided TEXT,"
	"  decided_by TEXT,"
	"  comment TEXT,"
	"  merged_commit TEXT"
	");"
	"CREATE INDEX reviews_by_status ON reviews(status, id);"
	"CREATE TABLE review_evidence ("
	"  id INTEGER PRIMARY KEY,"
	"  review_id INTEGER NOT NULL REFERENCES reviews(id),"
	"  time TEXT NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  body TEXT NOT NULL"
	");",

	/* 3: campaign runs, sweeps, requests, memory traces. */
	STORE_CAMPAIGN_SCHEMA,

	/* 4: moves of the official branch: intent, then outcome. */
	STORE_OFFICIAL_SCHEMA,

	/* 5: the maintainer agent's runs. */
	STORE_AGENT_SCHEMA,

	/* 6: connect time, connection reuse and token gaps per request. */
	STORE_CAMPAIGN_SCHEMA STORE_CAMPAIGN_SCHEMA_5,

	/* 7: fidelity runs, cells and predictions; gate records. */
	STORE_RESULTS_SCHEMA,

	/* 8: version manifests, their packages, update attempts, and each
	 * engine's current manifest. */
	STORE_UPDATE_SCHEMA,

	/* 9: triage: its runs, smoke runs, incidents and their transitions. */
	STORE_TRIAGE_SCHEMA,

	/* 10: cycles, their steps and their agent tasks. */
	STORE_CYCLE_SCHEMA,

	/* 11: update attempts may be group_rolled_back. */
	STORE_UPDATE_SCHEMA_11,

	/* 12: incidents may blame a commit (kind "change"). */
	STORE_TRIAGE_SCHEMA_12,

	/* 13: performance regression alerts and their transitions. */
	STORE_REGRESS_SCHEMA,

	/* 14: alerts name their metric as the glossary names the figure. */
	STORE_REGRESS_SCHEMA_14,
};

const int store_n_migrations =
    (int)(sizeof(store_migrations) / sizeof(store_migrations[0]));
