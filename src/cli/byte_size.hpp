// Byte counts on the command line: an integer with an optional unit, the
// one parser behind every option that asks for bytes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace hreduce::cli {

// What byte_count_error() says a byte count may look like.
inline constexpr const char* kByteCountForms =
    "an integer with an optional unit: K = 1000, Ki = 1024, M = 1000^2, Mi = 1024^2, "
    "G = 1000^3, Gi = 1024^3, each optionally followed by B (e.g. 4096, 64Ki, 1MiB, 2G)";

// "4096", "64Ki", "1MiB", "2G", "8B" -> bytes. Units are case-insensitive
// (k, mi, gib); no sign, no fraction, no space. nullopt when the text is
// not of that form or the count does not fit a size_t.
std::optional<std::size_t> parse_byte_count(const std::string& text);

// The byte count in `text`, at least `min_bytes`; otherwise throws
// ArgumentError naming `command`, `option`, the forms and the text.
std::size_t byte_count_or_throw(const std::string& command, const std::string& option,
                                const std::string& text, std::size_t min_bytes);

}  // namespace hreduce::cli
