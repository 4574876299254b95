// Parsing of the values people type: sequence-length lists ("4096,8k,32k"; k = 1024), positive
// integers and prices. Every error names the option and the offending text (exit code 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ub::cli {

// "8192" -> 8192, "8k" -> 8192, "1M" -> 1048576, "4G" -> 4 Gi. Throws UsageError naming `what`.
int64_t parse_size(const std::string& text, const std::string& what);
std::vector<int64_t> parse_size_list(const std::string& text, const std::string& what);
// The sequence lengths of a command that also takes packed documents (--docs): `seqlens` parsed
// when given on the command line or when there are no documents; otherwise one length, the
// documents together.
std::vector<int64_t> seqlens_or_documents(const std::string& seqlens, bool seqlens_given,
                                          const std::vector<int64_t>& docs, const std::string& what);
// The peer's ranges: python range(start, stop, step), stop excluded, a 0 start meaning `step`.
std::vector<int64_t> expand_range(int64_t start, int64_t stop, int64_t step, const std::string& what);
// "--m 2048 4096", "--m 2048,4096" or "--m-range 0 20480 256" into the list of sizes.
std::vector<int64_t> sizes_from(const std::vector<std::string>& list,
                                const std::vector<int64_t>& range, const std::string& name);
// "0", "0,1" or "all" (of `available` devices).
std::vector<int> parse_devices(const std::string& text, int available);

// A strictly positive number ("3.5", "1e12"). Throws UsageError naming `what`.
double parse_positive(const std::string& text, const std::string& what);
// UsageError when `out` (a records file to append to) is one of `inputs` (the same file, by inode).
void refuse_output_among_inputs(const std::string& out, const std::vector<std::string>& inputs, const std::string& what);
// UsageError when a file a report page writes into `dir` (report.html, report.md, charts/...) is
// one of `inputs` (a file, or a file in a folder input): the page would overwrite what it reads.
void refuse_page_over_inputs(const std::string& dir, const std::vector<std::string>& inputs);
std::optional<double> parse_optional_positive(const std::string& text, const std::string& what);

// A duration: "30m", "1h30m", "90s", "2h", or plain seconds ("1800"); positive, at most a week.
double parse_duration_seconds(const std::string& text, const std::string& what);

// The training engine's --precision: "master" (fp32 master weights) -> true, "bf16" -> false.
bool parse_master_weights(const std::string& precision);

}  // namespace ub::cli
