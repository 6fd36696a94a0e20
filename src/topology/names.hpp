// The names of the topology's enums (include/hreduce/topology.hpp), as
// written in options, the environment and CLI output. One table each, read
// by to_string, the parsers and the CLI's messages.
#pragma once

#include <iterator>

#include "hreduce/topology.hpp"
#include "src/common/enum_names.hpp"

namespace hreduce::detail {

inline constexpr EnumName<Level> kLevelNames[] = {
    {Level::machine, "machine"}, {Level::package, "package"}, {Level::numa, "numa"},
    {Level::l3, "l3"},           {Level::l2, "l2"},           {Level::l1, "l1"},
    {Level::core, "core"},       {Level::pu, "pu"},
};
static_assert(std::size(kLevelNames) == kLevelCount, "every level has a name");
static_assert(enum_names_distinct(kLevelNames));

inline constexpr EnumName<PlacementPolicy> kPlacementNames[] = {
    {PlacementPolicy::compact, "compact"},
    {PlacementPolicy::scatter, "scatter"},
};
static_assert(enum_names_distinct(kPlacementNames));

}  // namespace hreduce::detail
