#include "src/node/node_way.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "hreduce/error.hpp"

#include "src/node/node_areas.hpp"
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
  if (one_receiver(processes, kind)) return kNodeInlineOneReceiver;
  const auto others = static_cast<std::size_t>(std::max(processes - 1, 1));
  return std::clamp(kNodeInlineBudget / others / 64 * 64, kNodeInlineFloor, kNodeInline);
}

std::uint8_t kind_bit(CollectiveKind kind) {
  if (kind == CollectiveKind::reduce_scatter_block) kind = CollectiveKind::reduce_scatter;
  return static_cast<std::uint8_t>(1u << static_cast<unsigned>(kind));
}

NodeWay node_way(CollectiveKind kind, std::size_t bytes, std::size_t elem_size, bool may_throw,
                 const NodeShape& shape, bool total_and_prefix) {
  if (may_throw) return NodeWay::chunks;
  if (bytes <= node_inline_bytes(shape.processes, kind)) return NodeWay::inline_announcement;
  if (shape.single_copy && (shape.chunks_won & kind_bit(kind)) == 0 && shape.processes == 2 &&
      elem_size <= shape.chunk_bytes && bytes >= kNodeSingleCopyBytes && !total_and_prefix) {
    return NodeWay::single_copy;
  }
  return NodeWay::chunks;
}

SingleCopySetting single_copy_setting(const char* text) {
  if (text == nullptr || *text == '\0') return SingleCopySetting::on;
  if (std::strcmp(text, "auto") == 0) return SingleCopySetting::race;
  for (const char* off : {"0", "off", "false", "no"}) {
    if (std::strcmp(text, off) == 0) return SingleCopySetting::off;
  }
  for (const char* on : {"1", "on", "true", "yes"}) {
    if (std::strcmp(text, on) == 0) return SingleCopySetting::on;
  }
  throw ArgumentError(
      std::string("hreduce: HREDUCE_NODE_SINGLE_COPY must be auto, on or off, got '") + text + "'");
}

bool single_copy_won(const RaceTimes& summed) {
  return summed.single_copy_seconds <= summed.chunks_seconds;
}

std::size_t single_copy_cut(std::size_t count, std::size_t elem_size, int folders, int receiver,
                            bool other_copies) {
  // Cuts on a cache line where the element size allows.
  auto on_line = [&](std::size_t elements) {
    return std::min(count, whole_lines(elements, elem_size));
  };
  // Copies only (an exscan), or two receivers (allreduce): each process
  // does half.
  if (folders != 1) return on_line((count + 1) / 2);
  // One receiver: below kNodeSplitFoldBytes it does everything; above, it
  // folds 3/5 and the other reads, folds and writes back 2/5, which evens
  // their time when reading, folding and writing cost alike. A scan's
  // process 0 also copies its own input to its prefix: then 4/5.
  if (count * elem_size < kNodeSplitFoldBytes) return receiver == 0 ? count : 0;
  const std::size_t fifths = other_copies ? 4 : 3;
  // The other makes two system calls to the receiver's one: a fixed cost
  // that the receiver evens by taking kNodeSplitFoldExtraBytes more.
  const std::size_t extra = kNodeSplitFoldExtraBytes / elem_size;
  const std::size_t receivers =
      std::min(count, count / 5 * fifths + count % 5 * fifths / 5 + extra);
  return on_line(receiver == 0 ? receivers : count - receivers);
}

}  // namespace hreduce::detail
