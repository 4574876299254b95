# Third-party libraries, all from Debian packages (see the README's set-up commands):
#   libcli11-dev, nlohmann-json3-dev, libfmt-dev, zlib1g-dev (gzip traces), libsqlite3-dev and libpq-dev
#   (the history database), libgtest-dev (tests only).
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)
find_package(ZLIB REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(PostgreSQL REQUIRED)
find_package(Threads REQUIRED)

# Warnings shared by every target of ours.
add_library(ub_warnings INTERFACE)
target_compile_options(ub_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-restrict>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${UB_WARNINGS_AS_ERRORS}>>:-Werror>)
