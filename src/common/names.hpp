// The names of the public enums of include/hreduce/options.hpp: the
// collective options and the collectives (Team::explain, Team::local_path).
// One table each, read by to_string, the parsers and the CLI's messages.
#pragma once

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

inline constexpr EnumName<Reproducibility> kReproducibilityNames[] = {
    {Reproducibility::run_to_run, "run_to_run"},
    {Reproducibility::shape_independent, "shape_independent"},
    {Reproducibility::exact, "exact"},
};
static_assert(enum_names_distinct(kReproducibilityNames));

inline constexpr EnumName<Collective> kCollectiveNames[] = {
    {Collective::reduce, "reduce"},
    {Collective::allreduce, "allreduce"},
    {Collective::reduce_scatter, "reduce_scatter"},
    {Collective::reduce_scatter_block, "reduce_scatter_block"},
    {Collective::scan, "scan"},
    {Collective::exscan, "exscan"},
};
static_assert(enum_names_distinct(kCollectiveNames));

}  // namespace hreduce::detail
