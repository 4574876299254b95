// One measurement on both sides of a comparison, told by its figures: two inputs of `compare`,
// `report` or `decide` whose figures are one measurement (the history's one_measurement: every
// point both hold alike in every figure behind it, whatever their headers or contexts say, and
// whatever lengths or steps one of them adds or leaves out). Suites are compared part by part. A
// byte copy and a file given twice are refuse_repeated_inputs's.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/line_source.hpp"

namespace ub::cli {

// UsageError naming both files (an input, or a folder's part). A folder's regular files are its
// inputs; a history selection (run:N) is read by `stored` where one is given (the stored runs
// against the file they were added from, grown since, are one measurement too); a pipe and a
// file the history's readers do not read are left to the command's own readers.
void refuse_shared_figures(const std::vector<std::string>& inputs, const std::string& command,
                           const std::function<LineSource(const std::string&)>& stored = {});

}  // namespace ub::cli
