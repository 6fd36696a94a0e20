// An in-memory transport for tests: P participants in one process (one
// thread each) exchange messages through a shared fabric, so every
// inter-process algorithm can run without MPI.
//
//   InMemoryFabric fabric(4);
//   std::thread t([&] { Channel& c = fabric.endpoint(1); c.send(0, ...); });
//   fabric.endpoint(0).recv(1, ...);
//
// Semantics are MPI's with unlimited eager buffering: send copies the bytes
// into a mailbox and returns at once; recv blocks until a message from that
// sender with that tag exists and takes the oldest one (FIFO per sender,
// receiver and tag). A receive whose size differs from the message's throws
// Error naming both sizes; so does a receive that waits longer than the
// fabric's timeout (a test that would otherwise hang fails instead).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "src/transport/channel.hpp"

namespace hreduce::detail {

class InMemoryFabric;

// One participant's end of an InMemoryFabric; used by one thread at a time.
class InMemoryChannel final : public Channel {
 public:
  int size() const override;
  int rank() const override { return rank_; }

  void send(int to, const void* data, std::size_t bytes, int tag) override;
  void recv(int from, void* data, std::size_t bytes, int tag) override;
  // send, then recv: sends never block here, so this cannot deadlock.
  void sendrecv(int to, const void* send_data, std::size_t send_bytes, int from, void* recv_data,
                std::size_t recv_bytes, int tag) override;

 private:
  friend class InMemoryFabric;
  InMemoryChannel(InMemoryFabric& fabric, int rank) : fabric_(fabric), rank_(rank) {}

  InMemoryFabric& fabric_;
  int rank_;
};

class InMemoryFabric {
 public:
  // P participants, 0..P-1. A receive that waits longer than `recv_timeout`
  // throws Error.
  explicit InMemoryFabric(int P, std::chrono::milliseconds recv_timeout = std::chrono::minutes(1));
  InMemoryFabric(const InMemoryFabric&) = delete;
  InMemoryFabric& operator=(const InMemoryFabric&) = delete;

  int size() const { return static_cast<int>(endpoints_.size()); }
  InMemoryChannel& endpoint(int rank);

  // Messages sent and not yet received (0 once every collective is done).
  std::size_t pending() const;

 private:
  friend class InMemoryChannel;
  using Key = std::tuple<int, int, int>;  // (from, to, tag)

  void check_rank(const char* what, int caller, int peer) const;
  void deliver(int from, int to, int tag, const void* data, std::size_t bytes);
  void take(int from, int to, int tag, void* data, std::size_t bytes);

  std::vector<std::unique_ptr<InMemoryChannel>> endpoints_;
  std::chrono::milliseconds recv_timeout_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;  // a message was delivered
  std::map<Key, std::deque<std::vector<std::byte>>> mailboxes_;
};

}  // namespace hreduce::detail
