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
// UsageError "<what>: N is given twice" for a list of lengths that names one twice (each would be
// computed and printed again).
void refuse_repeated(const std::vector<int64_t>& values, const std::string& what);
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

// The range a figure given on the command line can have: beyond it, a typo or a unit mistaken.
struct Range {
  double lo = 0, hi = 0;
};
inline constexpr Range kPriceRange{1e-6, 1e6};         // USD per GPU-hour
inline constexpr Range kPowerPriceRange{1e-3, 10};     // USD per kWh (100 would be a price per MWh)
inline constexpr Range kTokensRange{1, 1e18};          // tokens to train
inline constexpr Range kPueRange{1, 10};               // facility power over the GPUs' (1: the GPU alone)
inline constexpr Range kCapacityGibRange{1e-3, 1e6};   // a GPU's memory
inline constexpr int64_t kMaxTrainGpus = 10'000'000;    // the GPUs a training run's time is spread over

// A strictly positive number ("3.5", "1e12"), within `range` when one is given. Throws
// UsageError naming `what`.
double parse_positive(const std::string& text, const std::string& what, std::optional<Range> range = std::nullopt);
// Whether two paths name one file: the same inode where both exist, else the same place (through
// symlinks, dangling ones included); an SQLite `file:` URI names the file of its path.
bool same_file(const std::string& a, const std::string& b);
// UsageError when `out` (a records file to append to) is one of `inputs` (the same file, by inode),
// lies in a folder that is one of them (it would be read as one of the folder's files next time),
// or is there and not a regular file (refuse_unkept_output). `written` says what writing it does.
void refuse_output_among_inputs(const std::string& out, const std::vector<std::string>& inputs, const std::string& what,
                                const std::string& written = "records are appended to it");
// UsageError when `out` exists and is not a regular file: records appended to a pipe or a device
// are not kept, and a folder takes none.
void refuse_unkept_output(const std::string& out, const std::string& what);
// UsageError when `out` already holds something other than records of one of `commands` (a
// peer's log, a trace, another command's records, a gzip file, a database): what is appended
// would damage it. An empty or absent file takes records of any command.
void refuse_foreign_records(const std::string& out, const std::vector<std::string>& commands);
// UsageError when two of `inputs` are the same file or folder (by inode) or the same run:ID: a
// measurement compared with itself says nothing about a second GPU.
void refuse_repeated_inputs(const std::vector<std::string>& inputs, const std::string& command,
                            const std::string& why = "compared with itself it says nothing of a second GPU; give the "
                                                     "other GPU's measurement");
// UsageError when a file a report page writes into `dir` (report.html, report.md, charts/...) is
// one of `inputs` (a file, or a file in a folder input): the page would overwrite what it reads;
// and when `dir` is itself a folder input, or any suite's folder (a suite's results keep what was
// measured only).
void refuse_page_over_inputs(const std::string& dir, const std::vector<std::string>& inputs);
std::optional<double> parse_optional_positive(const std::string& text, const std::string& what,
                                              std::optional<Range> range = std::nullopt);

// --price-old and --price-new (USD per GPU-hour; --price-from and --price-to, their older names),
// each in kPriceRange; the two go together, and no more than kMaxPriceRatio apart either way
// (further is a units slip: a price per second beside one per hour).
struct Prices {
  std::optional<double> old_gpu, new_gpu;
};
inline constexpr double kMaxPriceRatio = 100;
Prices parse_prices(const std::string& price_old, const std::string& price_new);

// A duration: "30m", "1h30m", "90s", "2h", or plain seconds ("1800"); positive, at most a week.
double parse_duration_seconds(const std::string& text, const std::string& what);

// The training engine's --precision: "master" (fp32 master weights) -> true, "bf16" -> false.
bool parse_master_weights(const std::string& precision);

}  // namespace ub::cli
