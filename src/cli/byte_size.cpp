#include "src/cli/byte_size.hpp"

#include "src/cli/byte_size.h"

#include <cctype>
#include <cstdint>
#include <limits>

#include "hreduce/error.hpp"

namespace hreduce::cli {
namespace {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The multiplier a unit stands for; 0 for an unknown unit.
std::size_t unit_factor(const std::string& unit_text) {
  std::string unit = lower(unit_text);
  // "KiB" and "KB" mean what "Ki" and "K" mean; a lone "B" is bytes.
  if (!unit.empty() && unit.back() == 'b') unit.pop_back();
  if (unit.empty()) return 1;
  const bool binary = unit.size() == 2 && unit[1] == 'i';
  if (unit.size() != 1 && !binary) return 0;
  const std::size_t base = binary ? 1024 : 1000;
  switch (unit[0]) {
    case 'k': return base;
    case 'm': return base * base;
    case 'g': return base * base * base;
    default: return 0;
  }
}

}  // namespace

std::optional<std::size_t> parse_byte_count(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0) return std::nullopt;
  const std::size_t factor = unit_factor(text.substr(digits));
  if (factor == 0) return std::nullopt;
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  std::size_t count = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    const std::size_t digit = static_cast<std::size_t>(text[i] - '0');
    if (count > (kMax - digit) / 10) return std::nullopt;
    count = count * 10 + digit;
  }
  if (count > kMax / factor) return std::nullopt;
  return count * factor;
}

std::size_t byte_count_or_throw(const std::string& command, const std::string& option,
                                const std::string& text, std::size_t min_bytes) {
  const std::optional<std::size_t> bytes = parse_byte_count(text);
  if (!bytes) {
    throw ArgumentError(command + ": " + option + " wants a byte count, " + kByteCountForms +
                        "; got '" + text + "'");
  }
  if (*bytes < min_bytes) {
    throw ArgumentError(command + ": " + option + " wants at least " + std::to_string(min_bytes) +
                        " bytes, got '" + text + "' (" + std::to_string(*bytes) + " bytes)");
  }
  return *bytes;
}

}  // namespace hreduce::cli

extern "C" int hreduce_parse_byte_count(const char* text, size_t* bytes) {
  if (text == nullptr || bytes == nullptr) return 0;
  const std::optional<std::size_t> parsed = hreduce::cli::parse_byte_count(text);
  if (!parsed) return 0;
  *bytes = *parsed;
  return 1;
}

extern "C" const char* hreduce_byte_count_forms(void) { return hreduce::cli::kByteCountForms; }
