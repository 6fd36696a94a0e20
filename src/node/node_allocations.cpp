#include "src/node/node_allocations.hpp"

#include <algorithm>

#include "src/transport/channel.hpp"

namespace hreduce::detail {

void* NodeAllocations::allocate(Channel& node, std::size_t bytes) {
  const std::size_t mapped = std::max<std::size_t>(4096, (bytes + 4095) / 4096 * 4096);
  if (peers_.empty()) peers_.resize(static_cast<std::size_t>(size_));
  for (int q = 0; q < size_; ++q) {
    peers_[static_cast<std::size_t>(q)].push_back(
        SharedSegment::for_node(node, q == rank_ ? mapped : 0, q));
  }
  return peers_[static_cast<std::size_t>(rank_)].back().data();
}

NodePlace NodeAllocations::find(const void* data, std::size_t bytes) const {
  if (peers_.empty() || data == nullptr) return {};
  const auto* p = static_cast<const std::byte*>(data);
  const auto& mine = peers_[static_cast<std::size_t>(rank_)];
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const auto* base = static_cast<const std::byte*>(mine[k].data());
    if (p >= base && p + bytes <= base + mine[k].size()) {
      return {static_cast<std::int32_t>(k), static_cast<std::uint64_t>(p - base)};
    }
  }
  return {};
}

std::byte* NodeAllocations::at(int rank, const NodePlace& place) const {
  const SharedSegment& segment =
      peers_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(place.allocation)];
  return static_cast<std::byte*>(segment.data()) + place.offset;
}

}  // namespace hreduce::detail
