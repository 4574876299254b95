// One measurement on both sides of a comparison, told by its figures: two inputs of `compare`,
// `report` or `decide` whose figures are one measurement (the history's one_measurement: the points
// both hold alike to the last bit, whatever their headers or contexts say, and whatever lengths one
// of them adds or leaves out). A byte copy and a file given twice are refuse_repeated_inputs's.
#pragma once

#include <string>
#include <vector>

namespace ub::cli {

// UsageError naming both inputs. A folder's regular files are its inputs; a history selection
// (run:N), a pipe and a file the history's readers do not read are left to the command's own
// readers.
void refuse_shared_figures(const std::vector<std::string>& inputs, const std::string& command);

}  // namespace ub::cli
