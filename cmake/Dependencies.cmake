# Third-party libraries, all from Debian packages (see the README's set-up commands):
#   libcli11-dev, nlohmann-json3-dev, libfmt-dev, zlib1g-dev (gzip traces), libsqlite3-dev and libpq-dev
#   (the history database), libssl-dev (HMAC-SHA256 of the job secret at a rendezvous), libgtest-dev
#   (tests only).
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)
find_package(ZLIB REQUIRED)
find_package(SQLite3 REQUIRED)
# CMake 4 names SQLite's target SQLite3::SQLite3 and warns on the older SQLite::SQLite3, the only
# name CMake 3.25 (Debian 12) knows.
if(TARGET SQLite3::SQLite3)
  set(UB_SQLITE_TARGET SQLite3::SQLite3)
else()
  set(UB_SQLITE_TARGET SQLite::SQLite3)
endif()
find_package(PostgreSQL REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)

# Warnings shared by every target of ours.
add_library(ub_warnings INTERFACE)
target_compile_options(ub_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-restrict>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${UB_WARNINGS_AS_ERRORS}>>:-Werror>)
