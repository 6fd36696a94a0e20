// The names of the engine's enums: the collective options
// (include/hreduce/options.hpp) and the collectives a user names in
// Team::explain and Team::local_path. One table each, read by to_string,
// the parsers and the CLI's messages.
#pragma once

#include "hreduce/detail/call.hpp"
#include "hreduce/options.hpp"
#include "src/common/enum_names.hpp"

namespace hreduce::detail {

inline constexpr EnumName<Algorithm> kAlgorithmNames[] = {
    {Algorithm::automatic, "automatic"},
    {Algorithm::tree, "tree"},
    {Algorithm::sliced, "sliced"},
};
static_assert(enum_names_distinct(kAlgorithmNames));

inline constexpr EnumName<TreeShape> kTreeShapeNames[] = {
    {TreeShape::hierarchical, "hierarchical"},
    {TreeShape::binomial, "binomial"},
    {TreeShape::knomial, "knomial"},
    {TreeShape::binary, "binary"},
    {TreeShape::flat, "flat"},
    {TreeShape::chain, "chain"},
};
static_assert(enum_names_distinct(kTreeShapeNames));

// Not barrier (no data, nothing to explain) nor the engine's internal
// kinds (process_step.hpp): to_string(CollectiveKind) names those itself.
inline constexpr EnumName<CollectiveKind> kCollectiveNames[] = {
    {CollectiveKind::reduce, "reduce"},
    {CollectiveKind::allreduce, "allreduce"},
    {CollectiveKind::reduce_scatter, "reduce_scatter"},
    {CollectiveKind::reduce_scatter_block, "reduce_scatter_block"},
    {CollectiveKind::scan, "scan"},
    {CollectiveKind::exscan, "exscan"},
};
static_assert(enum_names_distinct(kCollectiveNames));

}  // namespace hreduce::detail
