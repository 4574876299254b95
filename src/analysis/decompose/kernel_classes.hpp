// Which bucket of a step a GPU kernel's time belongs to, decided by its name: rules kept as data
// (data/kernel_classes.json, and a user's own file with `decompose --classes`), each an extended
// regular expression (POSIX, case-insensitive; no backtracking blow-up on the long templated
// names kernels have) and a bucket; the first rule that matches wins, a user's rules first.
// Each distinct name is classified once.
#pragma once

#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ub::trace {

// The buckets of a step. Compute kernels fall in the first seven (routing: a mixture of experts'
// gathers and scatters); communication (NCCL) and memory copies count only where they are
// exposed (no compute kernel running); idle is the rest of the step, no kernel, copy or
// collective running.
enum class Bucket { gemm, attention, elementwise, loss, optimizer, routing, other, communication, memcpy, idle };
inline constexpr size_t kBuckets = 10;
inline constexpr std::array<Bucket, kBuckets> kAllBuckets = {
    Bucket::gemm,    Bucket::attention, Bucket::elementwise,   Bucket::loss,   Bucket::optimizer,
    Bucket::routing, Bucket::other,     Bucket::communication, Bucket::memcpy, Bucket::idle};
std::string_view to_string(Bucket b);
std::optional<Bucket> parse_bucket(std::string_view name);
bool is_compute(Bucket b);  // gemm .. other

class KernelClasses {
 public:
  KernelClasses();
  ~KernelClasses();
  KernelClasses(KernelClasses&&) noexcept;
  KernelClasses& operator=(KernelClasses&&) noexcept;

  // Rules from a file ({"rules": [{"bucket", "pattern", "covers"}]}); `first`: ahead of the rules
  // already there. UsageError naming the file and the rule for a bad bucket or pattern.
  void add_file(const std::filesystem::path& file, bool first);
  Bucket classify(const std::string& kernel_name);  // `other` when no rule matches
  size_t rules() const;

 private:
  struct Rule;
  std::vector<std::unique_ptr<Rule>> rules_;
  std::unordered_map<std::string, Bucket> cache_;
};

}  // namespace ub::trace
