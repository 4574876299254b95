// One card under two names; see one_card.hpp.
#include "cli/one_card.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "base/error.hpp"
#include "base/text.hpp"
#include "records/context_record.hpp"

namespace ub::cli {

namespace {

std::string card(const std::string& uuid) {
  std::string digits = to_lower(uuid);
  if (const size_t at = digits.find("gpu"); at != std::string::npos) digits.erase(at, 3);
  std::erase_if(digits, [](char c) { return !std::isxdigit(static_cast<unsigned char>(c)); });
  return digits;
}

}  // namespace

GpuSide gpu_side(const LineSource& t) {
  RecordGpus g = record_gpus(t);
  return {t.path, std::move(g.first_name), std::move(g.uuids)};
}

void refuse_one_card_two_names(const GpuSide& a, const GpuSide& b, const std::string& command) {
  if (to_lower(trim(a.name)) == to_lower(trim(b.name))) return;
  std::set<std::string> second;
  for (const std::string& u : b.uuids) second.insert(card(u));
  for (const std::string& u : a.uuids) {
    if (!card(u).empty() && second.count(card(u))) {
      throw UsageError(fmt::format("{}: {} ({}) and {} ({}) were measured on one GPU, {}, under two names: give each "
                                   "GPU's own measurements", command, printable(a.where), printable(a.name),
                                   printable(b.where), printable(b.name), printable(u)));
    }
  }
}

}  // namespace ub::cli
