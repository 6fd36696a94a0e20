// A test channel with synchronous sends (MPI_Ssend, and what MPI_Send does
// for large messages): send returns only after the receiver has copied the
// bytes straight out of the sender's buffer. An algorithm that needs a send
// to complete before its matching receive is posted deadlocks here; the
// channel detects that (or times out) and throws instead of hanging.
//
// It also never allocates after construction, so a test can count heap
// allocations of the algorithms alone.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hreduce/error.hpp"
#include "src/transport/channel.hpp"

namespace hreduce::test {

class RendezvousFabric {
 public:
  explicit RendezvousFabric(int P, std::chrono::milliseconds timeout = std::chrono::seconds(60))
      : size_(P), timeout_(timeout), offers_(static_cast<std::size_t>(P) * P) {
    for (int r = 0; r < P; ++r) endpoints_.push_back(std::make_unique<Endpoint>(*this, r));
  }

  int size() const { return size_; }
  detail::Channel& endpoint(int rank) { return *endpoints_[static_cast<std::size_t>(rank)]; }

 private:
  // At most one offer per (sender, receiver): a sender waits for its offer
  // to be taken before it does anything else.
  struct Offer {
    const void* data = nullptr;
    std::size_t bytes = 0;
    int tag = 0;
    bool posted = false;
    bool taken = false;
  };

  class Endpoint final : public detail::Channel {
   public:
    Endpoint(RendezvousFabric& fabric, int rank) : fabric_(fabric), rank_(rank) {}
    int size() const override { return fabric_.size_; }
    int rank() const override { return rank_; }
    void send(int to, const void* data, std::size_t bytes, int tag) override {
      fabric_.post(rank_, to, data, bytes, tag);
      fabric_.wait_taken(rank_, to);
    }
    void recv(int from, void* data, std::size_t bytes, int tag) override {
      fabric_.take(from, rank_, data, bytes, tag);
    }
    void sendrecv(int to, const void* send_data, std::size_t send_bytes, int from, void* recv_data,
                  std::size_t recv_bytes, int tag) override {
      fabric_.post(rank_, to, send_data, send_bytes, tag);
      fabric_.take(from, rank_, recv_data, recv_bytes, tag);
      fabric_.wait_taken(rank_, to);
    }

   private:
    RendezvousFabric& fabric_;
    int rank_;
  };

  Offer& offer(int from, int to) { return offers_[static_cast<std::size_t>(from) * size_ + to]; }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error("RendezvousFabric: " + what);
  }

  template <class Ready>
  void wait(std::unique_lock<std::mutex>& lock, Ready ready, const char* what, int a, int b) {
    if (!changed_.wait_for(lock, timeout_, ready)) {
      fail(std::string(what) + " " + std::to_string(a) + " -> " + std::to_string(b) +
           " timed out (deadlock with synchronous sends?)");
    }
  }

  void post(int from, int to, const void* data, std::size_t bytes, int tag) {
    std::unique_lock<std::mutex> lock(mutex_);
    Offer& o = offer(from, to);
    if (o.posted) fail("rank " + std::to_string(from) + " posted two sends at once");
    o = {data, bytes, tag, true, false};
    changed_.notify_all();
  }

  void wait_taken(int from, int to) {
    std::unique_lock<std::mutex> lock(mutex_);
    Offer& o = offer(from, to);
    wait(
        lock, [&] { return o.taken; }, "send", from, to);
    o = Offer{};
  }

  void take(int from, int to, void* data, std::size_t bytes, int tag) {
    std::unique_lock<std::mutex> lock(mutex_);
    Offer& o = offer(from, to);
    wait(
        lock, [&] { return o.posted && !o.taken; }, "recv", from, to);
    if (o.tag != tag) {
      // The sender is blocked on a message this receiver only takes later:
      // with synchronous sends, that is a deadlock.
      fail("rank " + std::to_string(to) + " waits for tag " + std::to_string(tag) + " from rank " +
           std::to_string(from) + ", which is blocked sending tag " + std::to_string(o.tag) +
           ": deadlock with synchronous sends");
    }
    if (o.bytes != bytes) {
      fail("rank " + std::to_string(to) + " receives " + std::to_string(bytes) +
           " bytes but rank " + std::to_string(from) + " sends " + std::to_string(o.bytes));
    }
    if (bytes > 0) std::memcpy(data, o.data, bytes);
    o.taken = true;
    changed_.notify_all();
  }

  int size_;
  std::chrono::milliseconds timeout_;
  std::vector<Offer> offers_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
  std::mutex mutex_;
  std::condition_variable changed_;
};

}  // namespace hreduce::test
