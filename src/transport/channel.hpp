// The abstract point-to-point channel the inter-process algorithms are
// written against. Participants are numbered 0..size()-1; a channel is used
// by one thread per participant at a time. The MPI transport
// (mpi_channel.*) and an in-memory transport for tests (in_memory_channel.*)
// implement it, so every algorithm runs unchanged on both.
#pragma once

#include <cstddef>

namespace hreduce::detail {

class Channel {
 public:
  virtual ~Channel() = default;

  virtual int size() const = 0;
  virtual int rank() const = 0;

  // Blocking send / receive of exactly `bytes` bytes. Messages between one
  // pair with one tag arrive in the order sent. Failures throw Error.
  virtual void send(int to, const void* data, std::size_t bytes, int tag) = 0;
  virtual void recv(int from, void* data, std::size_t bytes, int tag) = 0;
  // Send and receive at once (never deadlocks against the partner's
  // matching sendrecv).
  virtual void sendrecv(int to, const void* send_data, std::size_t send_bytes, int from,
                        void* recv_data, std::size_t recv_bytes, int tag) = 0;
};

}  // namespace hreduce::detail
