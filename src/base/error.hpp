// The two kinds of failure the tool reports, each as one line naming what is wrong and where.
//
// UsageError: what the user typed cannot be acted on (unknown GPU, a negative price, a size that
// is not a number). The command line exits with code 2.
// WorkError: the work itself failed (a malformed file, a missing key in a config.json, a GPU call
// that failed). Exit code 1.
#pragma once

#include <stdexcept>
#include <string>

namespace ub {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class WorkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ub
