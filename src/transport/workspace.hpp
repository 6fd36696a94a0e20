// Scratch memory for the inter-process algorithms, kept across calls so a
// steady state allocates nothing.
#pragma once

#include <cstddef>
#include <vector>

namespace hreduce::detail {

class Workspace {
 public:
  // A buffer of at least `bytes` bytes; slots are independent buffers.
  void* get(int slot, std::size_t bytes) {
    if (static_cast<int>(buffers_.size()) <= slot) buffers_.resize(slot + 1);
    std::vector<std::byte>& b = buffers_[slot];
    if (b.size() < bytes) b.resize(bytes);
    return b.data();
  }

 private:
  std::vector<std::vector<std::byte>> buffers_;
};

}  // namespace hreduce::detail
