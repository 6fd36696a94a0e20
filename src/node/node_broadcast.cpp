// Broadcast from one process of the node (the verdict and result of the
// step between nodes, which only the node's first process takes part in).
// A short vector travels in the root's announcement like a small
// reduction's input; a longer one through the result chunks of the ring,
// where the root copies each chunk in and every other process copies it
// out. Every process ticks every word of the ring, so the steps stay in
// line with the reductions' (node_chunk_ring.cpp).
#include <algorithm>

#include "src/common/copy.hpp"
#include "src/common/failure.hpp"
#include "src/common/level_clock.hpp"
#include "src/node/node_areas.hpp"
#include "src/node/node_group.hpp"

namespace hreduce::detail {

Failure NodeGroup::broadcast(const NodeCallInfo& info, void* data, std::size_t bytes, int root) {
  LevelScope scope(CallLevel::node_segment);
  const bool small = bytes <= inline_bytes_;
  const bool sends = rank_ == root;
  const bool offers = small && sends && !info.failure;
  Announcement announcement;
  announcement.payload = offers ? data : nullptr;
  announcement.payload_bytes = offers ? bytes : 0;
  if (Failure failure = announce_and_agree(info, announcement); failure || bytes == 0) {
    return failure;
  }
  if (small) {
    if (!sends) copy_bytes(data, payload_of(root), bytes);
    return {};
  }
  ProcessArea& mine = area(rank_);
  const std::size_t chunks = (bytes + chunk_ - 1) / chunk_;
  for (std::size_t c = 0; c < chunks; ++c) {
    const std::uint64_t step = steps_ + c + 1;
    const int buffer = static_cast<int>(step % buffers_);
    const std::size_t c0 = c * chunk_, m = std::min(bytes, c0 + chunk_) - c0;
    auto* at = static_cast<std::byte*>(data) + c0;
    publish(mine.staged, step);
    if (sends) {
      if (step > buffers_) {
        wait_all(&ProcessArea::drained, step - buffers_, "drain an earlier chunk");
      }
      copy_bytes(result(buffer), at, m);
      publish(mine.folded, step);
    } else {
      publish(mine.folded, step);
      wait(area(root).folded, step, root, "send its chunk");
      copy_bytes(at, result(buffer), m);
    }
    publish(mine.drained, step);
  }
  steps_ += chunks;
  return {};
}

}  // namespace hreduce::detail
