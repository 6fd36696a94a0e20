// The Channel over MPI point-to-point messages (Isend, Irecv) on a
// private duplicate of the application's communicator, so the runtime's
// messages can never match the application's. MPI errors come back as
// hreduce::Error carrying MPI's own error string.
#pragma once

#include <mpi.h>

#include <chrono>
#include <string>
#include <vector>

#include "src/transport/channel.hpp"

namespace hreduce::detail {

class MpiChannel final : public Channel {
 public:
  // Duplicates `comm` (collective over it) and sets MPI_ERRORS_RETURN on
  // the duplicate.
  explicit MpiChannel(MPI_Comm comm);
  ~MpiChannel() override;
  MpiChannel(const MpiChannel&) = delete;
  MpiChannel& operator=(const MpiChannel&) = delete;

  int size() const override { return size_; }
  int rank() const override { return rank_; }
  void send(int to, const void* data, std::size_t bytes, int tag) override;
  void recv(int from, void* data, std::size_t bytes, int tag) override;
  void sendrecv(int to, const void* send_data, std::size_t send_bytes, int from, void* recv_data,
                std::size_t recv_bytes, int tag) override;

  MPI_Comm comm() const { return comm_; }
  // Every send and receive completes within this time or throws Error
  // (zero: it may wait forever). Messages go nonblocking and are tested
  // until then, since a blocking MPI_Recv could never give up.
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }
  // The machine's processes outnumber its CPUs: a wait yields after a few
  // polls, for the partner it waits for may need this CPU.
  void set_crowded(bool crowded) { polls_before_yield_ = crowded ? kPollsCrowded : kPollsAlone; }

  // One send, receive or both, as its error messages name it: the text is
  // built only when an error is thrown (a message is on every call's path).
  struct Transfer {
    std::size_t send_bytes = 0;
    int to = -1;  // -1: no send
    std::size_t recv_bytes = 0;
    int from = -1;  // -1: no receive
    std::string text() const;
  };

 private:
  // Tests `requests` until all complete; on the deadline cancels them and
  // throws Error naming the transfer.
  void complete(std::vector<MPI_Request>& requests, std::vector<MPI_Status>& statuses,
                const Transfer& transfer);

  // A partner on a core of its own answers within these polls; a wait
  // that shares its CPU lets the partner run sooner (as kSpinsShared does
  // for threads, src/common/wait.hpp).
  static constexpr int kPollsAlone = 1000;
  static constexpr int kPollsCrowded = 8;

  std::chrono::milliseconds timeout_{0};
  int polls_before_yield_ = kPollsAlone;
  std::vector<MPI_Request> requests_;
  std::vector<MPI_Status> statuses_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

// From now on every message of an MpiChannel sent or received on the
// calling thread throws Error instead: the MPI drop-in's queue thread
// (src/mpi_dropin/call_queue.hpp) in a process that MPI gave less than
// MPI_THREAD_MULTIPLE, which must not race the application's MPI calls.
void refuse_mpi_messages_on_this_thread();

// Throws Error("<what>: <MPI's error string>") unless rc is MPI_SUCCESS.
void check_mpi(int rc, const std::string& what);

}  // namespace hreduce::detail
