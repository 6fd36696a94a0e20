// Names of levels and placement policies, as written in options, the
// environment and CLI output.
#include <cctype>
#include <string>

#include "hreduce/error.hpp"
#include "hreduce/topology.hpp"
#include "src/topology/names.hpp"

namespace hreduce {
namespace {

// Users type "L3" as often as "l3" (that is how lstopo prints it).
std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

}  // namespace

std::string_view to_string(Level level) { return detail::enum_name(detail::kLevelNames, level); }

std::optional<Level> parse_level(std::string_view name) {
  const std::string key = lower(name);
  // hwloc's synthetic syntax says "pack", most people say "socket".
  if (key == "pack" || key == "socket") return Level::package;
  return detail::enum_value(detail::kLevelNames, key);
}

std::vector<Level> parse_levels(std::string_view list) {
  std::vector<Level> levels;
  if (trim(list).empty()) return levels;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = list.find(',', begin);
    const std::string_view entry = trim(list.substr(begin, comma - begin));
    const std::optional<Level> level = parse_level(entry);
    if (!level) {
      throw ArgumentError("parse_levels: unknown level \"" + std::string(entry) + "\" in \"" +
                          std::string(list) + "\" (expected " +
                          detail::enum_names_text(detail::kLevelNames) + ")");
    }
    levels.push_back(*level);
    if (comma == std::string_view::npos) return levels;
    begin = comma + 1;
  }
}

std::string_view to_string(PlacementPolicy policy) {
  return detail::enum_name(detail::kPlacementNames, policy);
}

std::optional<PlacementPolicy> parse_placement(std::string_view name) {
  return detail::enum_value(detail::kPlacementNames, lower(name));
}

}  // namespace hreduce
