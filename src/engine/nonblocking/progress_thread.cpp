#include "src/engine/nonblocking/progress_thread.hpp"

#include <cstring>
#include <string>

#include "hreduce/error.hpp"
#include "src/common/environment.hpp"

namespace hreduce::detail {

bool progress_threads_wanted() {
  static const bool on = [] {
    const char* text = environment("HREDUCE_PROGRESS_THREAD");
    if (text == nullptr || std::strcmp(text, "0") == 0 || std::strcmp(text, "off") == 0) {
      return false;
    }
    if (std::strcmp(text, "1") == 0 || std::strcmp(text, "on") == 0) return true;
    throw ArgumentError(std::string("Team: HREDUCE_PROGRESS_THREAD must be 1, on, 0 or off, got ") +
                        text);
  }();
  return on;
}

}  // namespace hreduce::detail
