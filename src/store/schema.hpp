// The history's tables, created and migrated by the tool itself: `schema_version` holds the
// version the database is at; each migration runs in its own transaction, once, under a lock
// (SQLite's write lock, a PostgreSQL advisory lock), so two processes opening a new database at
// the same moment create it once. docs/history.md describes the tables.
#pragma once

#include "store/database.hpp"

namespace ub::history {

// The version this build writes and reads.
inline constexpr int kSchemaVersion = 9;

// Brings `db` to kSchemaVersion. Throws WorkError when the database is at a later version (made
// by a newer upgradebench).
void migrate(Database& db);

// For a database opened read-only, which cannot be migrated: WorkError unless it is at
// kSchemaVersion (an older one is brought up to date by a command that writes, history add).
void check_schema(Database& db);

// Whether `db` holds a history of an older schema version than this build's (one migrate()
// brings up to date); false for a current, newer, empty or damaged one (check_schema says which).
bool is_older_schema(Database& db);

}  // namespace ub::history
