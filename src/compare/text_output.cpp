#include "src/compare/text_output.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "hreduce/error.hpp"

namespace hreduce::detail::compare {

std::string human_bytes(std::size_t bytes) {
  constexpr std::size_t kKiB = 1024;
  constexpr std::size_t kMiB = kKiB * 1024;
  constexpr std::size_t kGiB = kMiB * 1024;
  if (bytes >= kGiB && bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes >= kKiB && bytes % kKiB == 0) return std::to_string(bytes / kKiB) + " KiB";
  return std::to_string(bytes) + " B";
}

void write_text_file(const std::string& path, const std::string& text, const char* option) {
  const auto fail = [&](int error) {
    throw ArgumentError(std::string("hreduce bench: cannot write ") + option + " file '" + path +
                        "': " + std::strerror(error));
  };
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) fail(errno);
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int write_error = errno;
  // fclose flushes, so a full disk may only show up here.
  const bool closed = std::fclose(file) == 0;
  if (!written) fail(write_error);
  if (!closed) fail(errno);
}

}  // namespace hreduce::detail::compare
