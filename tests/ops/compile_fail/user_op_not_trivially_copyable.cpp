// Must not compile: elements travel by memcpy, so they must be trivially copyable.
#include <string>

#include "hreduce/ops.hpp"

void f() {
  auto op = hreduce::make_op<std::string>(
      [](const std::string& a, const std::string& b) { return a + b; });
  (void)op;
}
