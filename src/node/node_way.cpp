#include "src/node/node_way.hpp"

#include <algorithm>

#include "src/node/node_group.hpp"

namespace hreduce::detail {

std::string_view to_string(NodeWay way) {
  switch (way) {
    case NodeWay::inline_announcement: return "inline";
    case NodeWay::single_copy: return "single copy";
    case NodeWay::chunks: return "chunks";
  }
  return "?";
}

std::size_t node_inline_bytes(int processes, CollectiveKind kind) {
  if (kind == CollectiveKind::reduce && processes == 2) return kNodeInlineReduce;
  const auto others = static_cast<std::size_t>(std::max(processes - 1, 1));
  return std::clamp(kNodeInlineBudget / others / 64 * 64, kNodeInlineFloor, kNodeInline);
}

NodeWay node_way(CollectiveKind kind, std::size_t bytes, std::size_t elem_size, bool may_throw,
                 const NodeShape& shape, bool total_and_prefix) {
  if (may_throw) return NodeWay::chunks;
  if (bytes <= node_inline_bytes(shape.processes, kind)) return NodeWay::inline_announcement;
  if (shape.single_copy && shape.processes == 2 && elem_size <= shape.chunk_bytes &&
      bytes >= kNodeSingleCopyBytes && !total_and_prefix) {
    return NodeWay::single_copy;
  }
  return NodeWay::chunks;
}

}  // namespace hreduce::detail
