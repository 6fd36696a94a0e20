// How the processes of one node move a reduction's data, as a pure function
// of the call and the node's shape: callable without a node group, so that
// NodeGroup::reduce, Team::across_processes and a model of the machine ask
// the same question and get the same answer.
//
//   inline       every input travels inside its process's announcement
//                (up to node_inline_bytes), read from there by the others;
//   single copy  two processes read and write each other's memory directly
//                (process_vm_readv/writev), from kNodeSingleCopyBytes,
//                where the kernel allows it (and, with
//                HREDUCE_NODE_SINGLE_COPY=auto, where it won a race
//                against the chunks when the team was built);
//   chunks       the staging ring of the shared segment, chunk by chunk.
//
// An op that may throw never goes inline or single copy (the chunks carry
// the verdict), nor does a call where one process wants both the node's
// total and its own prefix (a scan across several nodes: the node's first
// process). Where a call's buffers overlap in ways the single copy cannot
// serve (node_single_copy.cpp decides from both announcements), it falls
// back to the chunks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hreduce/team.hpp"  // CollectiveKind

namespace hreduce::detail {

enum class NodeWay : std::uint8_t { inline_announcement, single_copy, chunks };

std::string_view to_string(NodeWay way);

struct NodeShape {
  int processes = 1;            // on this node
  std::size_t chunk_bytes = 0;  // per chunk and process (NodeGroup::chunk_bytes())
  bool single_copy = false;     // the processes reach each other's memory
  // Kinds (kind_bit) whose race the chunks won: those never take the
  // single copy.
  std::uint8_t chunks_won = 0;
};

// A kind's bit in NodeShape::chunks_won; reduce_scatter_block shares
// reduce_scatter's (the node level serves both alike).
std::uint8_t kind_bit(CollectiveKind kind);

// HREDUCE_NODE_SINGLE_COPY: never, (unset or `on`) wherever the kernel
// allows it, or (`auto`) where it also won describe()'s race against the
// chunks. The text is the variable's value (null when unset); anything
// else is an ArgumentError naming the variable.
enum class SingleCopySetting : std::uint8_t { off, on, race };
SingleCopySetting single_copy_setting(const char* text);

// One process's best time for one kind's race call each way, or their sums.
struct RaceTimes {
  double single_copy_seconds = 0;
  double chunks_seconds = 0;
};
// Whether the single copy serves, from every process's times: by their sum,
// so that every process decides alike, with a tie going to the single copy
// (it leaves the caches to the application).
bool single_copy_won(const RaceTimes& summed);

// Whether a call has one process that receives the other's input: a
// reduce, scan or exscan on two processes (a scan's first process takes
// its own input).
inline bool one_receiver(int processes, CollectiveKind kind) {
  return processes == 2 && (kind == CollectiveKind::reduce || kind == CollectiveKind::scan ||
                            kind == CollectiveKind::exscan);
}
// The largest input that travels inside the announcement, for `processes`
// processes on the node (node_limits.hpp's kNodeInline* constants).
std::size_t node_inline_bytes(int processes, CollectiveKind kind);

NodeWay node_way(CollectiveKind kind, std::size_t bytes, std::size_t elem_size, bool may_throw,
                 const NodeShape& shape, bool total_and_prefix = false);

// The single copy's cut between two processes (node_single_copy.cpp): of
// `count` elements of `elem_size` bytes, process 0 computes [0, cut) and
// process 1 the rest. `folders`: how many processes want both inputs folded
// (allreduce 2, reduce and scan 1, an exscan's copy 0); `receiver`: which
// one, where one; `other_copies`: the other process also copies
// its own input to its scan prefix. For one receiver this is where the
// cut starts; the processes then balance it by their times
// (cut_balance.hpp).
std::size_t single_copy_cut(std::size_t count, std::size_t elem_size, int folders, int receiver,
                            bool other_copies);

}  // namespace hreduce::detail
