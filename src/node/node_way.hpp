// How the processes of one node move a reduction's data, as a pure function
// of the call and the node's shape: callable without a node group, so that
// NodeGroup::reduce, Team::across_processes and a model of the machine ask
// the same question and get the same answer.
//
//   inline       every input travels inside its process's announcement
//                (up to node_inline_bytes), read from there by the others;
//   single copy  two processes read and write each other's memory directly
//                (process_vm_readv/writev), from kNodeSingleCopyBytes;
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
  bool single_copy = false;     // the kernel lets the processes reach each other's memory
};

// The largest input that travels inside the announcement, for `processes`
// processes on the node (node_group.hpp's kNodeInline* constants).
std::size_t node_inline_bytes(int processes, CollectiveKind kind);

NodeWay node_way(CollectiveKind kind, std::size_t bytes, std::size_t elem_size, bool may_throw,
                 const NodeShape& shape, bool total_and_prefix = false);

// The single copy's cut between two processes (node_single_copy.cpp): of
// `count` elements of `elem_size` bytes, process 0 computes [0, cut) and
// process 1 the rest. `folders`: how many processes want both inputs folded
// (allreduce 2, reduce and scan 1, an exscan's copy 0); `receiver`: which
// one, where one; `other_copies`: the other process also copies
// its own input to its scan prefix.
std::size_t single_copy_cut(std::size_t count, std::size_t elem_size, int folders, int receiver,
                            bool other_copies);

}  // namespace hreduce::detail
