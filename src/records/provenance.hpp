// What a file's numbers are: measurements, unless the file says otherwise. Hand-written example
// and test data says so in its first lines, as `# provenance: ...` in the text formats (benchmark.py,
// bench_flash_attn.py, bench_decompose.py, mamf-finder.py printouts) or as the context record's
// "provenance" field in our records; `predict` writes its predictions with their own kind. Every
// command that shows numbers from a file carries this along: a row of example data is never
// called measured, a predicted one never measured either.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "base/line_source.hpp"

namespace ub {

enum class Origin { measured, predicted, example };

struct Provenance {
  Origin origin = Origin::measured;
  std::string note;  // the file's own words ("hand-written example data for tests ...")

  // The tag a row or chart point carries: MEASURED, PREDICTED or EXAMPLE DATA.
  const char* tag() const;
  bool measured() const { return origin == Origin::measured; }
};

// The note of a text format's provenance line ("# provenance: hand-written ..."), in any case and
// spacing ("#provenance:", "# Provenance :"); a line that says it and nothing more gets a note that
// says so. nullopt for any other line.
std::optional<std::string> provenance_line_note(std::string_view line);

// A context record's "provenance": its text (one of blanks gets a note that says so); WorkError
// naming `where` for a value that is no text (a file that says it is not measurements in a form we
// cannot read is not taken as measured).
std::optional<std::string> provenance_field_note(const nlohmann::json& value, const std::string& where);

// The provenance of `t` from its first lines (a `# provenance:` line, or a context record's field
// among the first records); measured when neither says anything.
Provenance read_provenance(const LineSource& t);

// The line that says a file is not measurements: "EXAMPLE DATA: PATH: NOTE" (or PREDICTED: ...).
std::string not_measured_line(const std::string& path, const Provenance& p);

// What a file's note makes it: example data where it has one (a run's provenance field), measured
// where it has none.
inline Provenance example_if_noted(const std::string& note) {
  return note.empty() ? Provenance{} : Provenance{Origin::example, note};
}

// The same for a file known to be example data by its note alone (a sweep log's provenance line).
inline std::string not_measured_line(const std::string& path, const std::string& example_note) {
  return not_measured_line(path, Provenance{Origin::example, example_note});
}

// The least trustworthy of two: example data over predicted over measured.
Provenance weaker(const Provenance& a, const Provenance& b);

}  // namespace ub
