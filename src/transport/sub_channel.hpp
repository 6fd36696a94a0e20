// A channel over a subset of another channel's participants (the processes
// of one node, or the leaders of all nodes), renumbered 0..k-1 in the order
// given. Messages go through the parent unchanged.
#pragma once

#include <algorithm>
#include <vector>

#include "hreduce/error.hpp"
#include "src/transport/channel.hpp"

namespace hreduce::detail {

class SubChannel : public Channel {
 public:
  // `members` lists parent ranks in sub-rank order and holds parent.rank().
  SubChannel(Channel& parent, std::vector<int> members)
      : parent_(parent), members_(std::move(members)) {
    auto it = std::find(members_.begin(), members_.end(), parent_.rank());
    if (it == members_.end()) throw ArgumentError("SubChannel: this participant is not a member");
    rank_ = static_cast<int>(it - members_.begin());
  }

  int size() const override { return static_cast<int>(members_.size()); }
  int rank() const override { return rank_; }
  void send(int to, const void* data, std::size_t bytes, int tag) override {
    parent_.send(members_[to], data, bytes, tag);
  }
  void recv(int from, void* data, std::size_t bytes, int tag) override {
    parent_.recv(members_[from], data, bytes, tag);
  }
  void sendrecv(int to, const void* send_data, std::size_t send_bytes, int from, void* recv_data,
                std::size_t recv_bytes, int tag) override {
    parent_.sendrecv(members_[to], send_data, send_bytes, members_[from], recv_data, recv_bytes,
                     tag);
  }

 private:
  Channel& parent_;
  std::vector<int> members_;
  int rank_ = 0;
};

}  // namespace hreduce::detail
