#include "src/transport/in_memory_channel.hpp"

#include <string>

#include "hreduce/error.hpp"
#include "src/common/copy.hpp"

namespace hreduce::detail {

int InMemoryChannel::size() const { return fabric_.size(); }

void InMemoryChannel::send(int to, const void* data, std::size_t bytes, int tag) {
  fabric_.check_rank("send to", rank_, to);
  fabric_.deliver(rank_, to, tag, data, bytes);
}

void InMemoryChannel::recv(int from, void* data, std::size_t bytes, int tag) {
  fabric_.check_rank("recv from", rank_, from);
  fabric_.take(from, rank_, tag, data, bytes);
}

void InMemoryChannel::sendrecv(int to, const void* send_data, std::size_t send_bytes, int from,
                               void* recv_data, std::size_t recv_bytes, int tag) {
  send(to, send_data, send_bytes, tag);
  recv(from, recv_data, recv_bytes, tag);
}

InMemoryFabric::InMemoryFabric(int P, std::chrono::milliseconds recv_timeout)
    : recv_timeout_(recv_timeout) {
  if (P < 1) {
    throw ArgumentError("InMemoryFabric: participant count must be >= 1, got " + std::to_string(P));
  }
  endpoints_.reserve(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) {
    endpoints_.push_back(std::unique_ptr<InMemoryChannel>(new InMemoryChannel(*this, r)));
  }
}

InMemoryChannel& InMemoryFabric::endpoint(int rank) {
  if (rank < 0 || rank >= size()) {
    throw ArgumentError("InMemoryFabric: endpoint " + std::to_string(rank) + " is outside 0.." +
                        std::to_string(size() - 1));
  }
  return *endpoints_[static_cast<std::size_t>(rank)];
}

std::size_t InMemoryFabric::pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t count = 0;
  for (const auto& [key, queue] : mailboxes_) count += queue.size();
  return count;
}

void InMemoryFabric::check_rank(const char* what, int caller, int peer) const {
  if (peer < 0 || peer >= size()) {
    throw ArgumentError("InMemoryChannel: rank " + std::to_string(caller) + " cannot " + what +
                        " rank " + std::to_string(peer) + ", outside 0.." +
                        std::to_string(size() - 1));
  }
}

void InMemoryFabric::deliver(int from, int to, int tag, const void* data, std::size_t bytes) {
  // Copy outside the lock; only the queue operation is shared.
  std::vector<std::byte> message(bytes);
  copy_bytes(message.data(), data, bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    mailboxes_[Key{from, to, tag}].push_back(std::move(message));
  }
  arrived_.notify_all();
}

void InMemoryFabric::take(int from, int to, int tag, void* data, std::size_t bytes) {
  std::vector<std::byte> message;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    std::deque<std::vector<std::byte>>& queue = mailboxes_[Key{from, to, tag}];
    // std::map references stay valid while other keys are inserted.
    if (!arrived_.wait_for(lock, recv_timeout_, [&] { return !queue.empty(); })) {
      throw UnusableTeamError("InMemoryChannel: rank " + std::to_string(to) + " waited " +
                              std::to_string(recv_timeout_.count()) +
                              " ms for a message from rank " + std::to_string(from) + " (tag " +
                              std::to_string(tag) + ", " + std::to_string(bytes) +
                              " bytes) that never came");
    }
    message = std::move(queue.front());
    queue.pop_front();
  }
  if (message.size() != bytes) {
    throw TransportError("InMemoryChannel: rank " + std::to_string(to) + " posted a receive of " +
                         std::to_string(bytes) + " bytes from rank " + std::to_string(from) +
                         " (tag " + std::to_string(tag) + ") but the message has " +
                         std::to_string(message.size()) + " bytes");
  }
  copy_bytes(data, message.data(), bytes);
}

}  // namespace hreduce::detail
