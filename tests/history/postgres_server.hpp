// A real PostgreSQL server for the history's tests, from Debian's packages, in a temporary
// folder: initdb, then pg_ctl start listening on a Unix socket only (no TCP port to collide on),
// stopped and removed when the test process exits. As root the server runs as the `postgres`
// user (PostgreSQL refuses root). Absent when no server is installed: the tests say so and skip.
#pragma once

#include <string>

namespace ub::testing {

// The address of a fresh, empty database on the test server ("" when no server could start;
// `why` says why).
std::string fresh_postgres_database(std::string& why);

}  // namespace ub::testing
