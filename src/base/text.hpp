// Small string helpers shared by the parsers: trimming, splitting, case folding, and the edit
// distance used to suggest the closest known names when a lookup fails.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ub {

std::string trim(std::string_view s);
std::string to_lower(std::string_view s);
// Splits on `sep`, trims each piece, drops empty pieces.
std::vector<std::string> split(std::string_view s, char sep);
// Levenshtein distance, case-insensitive.
size_t edit_distance(std::string_view a, std::string_view b);
// The `count` candidates closest to `name`, best first.
std::vector<std::string> closest(std::string_view name, const std::vector<std::string>& candidates,
                                 size_t count);
// `s` safe for a terminal, with nothing lost: control characters (an escape sequence, a newline
// unless `keep_newlines`, a carriage return, DEL, and the C1 controls U+0080-U+009F that some
// terminals obey), the bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069), the
// zero-width and invisible characters (U+200B-U+200F, U+2060-U+2064, U+FEFF) and any
// byte of no valid UTF-8 sequence are written as \xNN, so text read from a file shows what it
// holds and cannot drive the terminal, reorder what it shows, or break a line. Every error
// message, warning and table passes through it.
std::string escape_control(std::string_view s, bool keep_newlines = false);
// The same, for text set in a table or a note (the name says where it goes).
std::string printable(std::string_view s, bool keep_newlines = false);
// `s` with every byte outside printable ASCII written as \xNN: for a name that should be ASCII (a
// GPU model's), where a look-alike letter or an invisible one would read as the name it is not.
std::string ascii_printable(std::string_view s);
// `v` to `precision` decimals; a figure left with fewer than two significant digits there (a
// $/Mtok of a cheap GPU, 0.0004 or 0.0053; electricity at a tenth of a cent per kWh) keeps two
// instead of reading as nothing or as a step.
std::string fixed_decimals(double v, int precision);
// "a-b", or "a" where the two read alike as printed ("1.11-1.11x" says one figure twice).
std::string span_text(const std::string& a, const std::string& b);
// A name read from a file, in single quotes and printable, for a message ("tensor 'x.weight'").
std::string name_in_quotes(std::string_view s);
// Replaces each byte of `s` that is not part of valid UTF-8 with U+FFFD; false when there was none.
// Text read outside a JSON parser (a trace's kernel names, streamed) may hold any bytes, and the
// JSON written from it must be UTF-8.
bool replace_invalid_utf8(std::string& s);
// A byte count as sizes are written on the command line: "4G", "16M", "8K" when it is a whole
// number of them, else the number.
std::string binary_size_text(int64_t bytes);
// 64-bit FNV-1a of `text` as 16 hex digits: a stable key, the same on every machine (a run's key in
// the history, a page's digest), not a defence against anyone.
std::string fnv1a_hex(std::string_view text);

}  // namespace ub
