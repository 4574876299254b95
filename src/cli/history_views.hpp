// What `history` prints: the documents (text, markdown, CSV) and JSON of its subcommands.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "analysis/history/fleet.hpp"
#include "analysis/history/trend.hpp"
#include "report/document.hpp"
#include "store/history_store.hpp"

namespace ub::cli {

using FileOutcomes = std::vector<std::pair<std::string, std::vector<history::AddOutcome>>>;

report::Document added_document(const FileOutcomes& files, const std::string& db);
nlohmann::json added_json(const FileOutcomes& files, const std::string& db);
report::Document list_document(const std::vector<history::RunSummary>& runs, size_t limit);
nlohmann::json list_json(const std::vector<history::RunSummary>& runs);
report::Document show_document(const history::RunDetail& d);
nlohmann::json show_json(const history::RunDetail& d);
report::Document metrics_document(const std::vector<history::MetricInfo>& metrics);
nlohmann::json metrics_json(const std::vector<history::MetricInfo>& metrics);
// One block per series (trends_of, fleets_of); the JSON's "series" / "fleets" in the same order.
// Each takes at least one.
report::Document trend_document(const std::vector<Trend>& series);
nlohmann::json trend_json(const std::vector<Trend>& series);
report::Document fleet_document(const std::vector<Fleet>& series);
nlohmann::json fleet_json(const std::vector<Fleet>& series);

// "+16.3% [+15.1%, +17.5%]"
std::string change_text(const Change& c);

}  // namespace ub::cli
