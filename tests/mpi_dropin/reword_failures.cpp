// Linked into a test-only build of the drop-in library: every failure
// message is reworded (ROT13 on its letters) as it is thrown, so that
// "processes disagree ... with count" reads as something else entirely.
// The drop-in's error classes must not change: they follow the failure's
// kind, never its words.
#include <string>

#include "src/common/failure.hpp"

namespace {

std::string reworded(const std::string& text) {
  std::string out = "reworded: ";
  for (char c : text) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>('a' + (c - 'a' + 13) % 26);
    if (c >= 'A' && c <= 'Z') c = static_cast<char>('A' + (c - 'A' + 13) % 26);
    out += c;
  }
  return out;
}

const bool installed = [] {
  hreduce::detail::reword_failure_text = &reworded;
  return true;
}();

}  // namespace
