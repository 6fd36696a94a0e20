// The text a failure message quotes for a caught exception.
#pragma once

#include <exception>

namespace hreduce::detail {

// Only inside a catch block: the exception being handled's what(), or a
// fixed text for one not derived from std::exception. The text lives as
// long as that exception is being handled.
inline const char* current_exception_text() noexcept {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

}  // namespace hreduce::detail
