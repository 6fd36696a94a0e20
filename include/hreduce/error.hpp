// The one exception type of hreduce.
#pragma once

#include <stdexcept>
#include <string>

namespace hreduce {

// Every failure the runtime reports is an Error. Messages name the operation,
// the member (where there is one) and the values that were compared.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace hreduce
