#include "src/transport/mpi_channel.hpp"

#include <algorithm>
#include <climits>
#include <thread>

#include "hreduce/error.hpp"

namespace hreduce::detail {
namespace {

// MPI counts are ints: longer messages go as several pieces with the same
// tag, which MPI delivers in order.
constexpr std::size_t kPiece = std::size_t{1} << 30;

int piece_of(std::size_t bytes, std::size_t done) {
  return static_cast<int>(std::min(kPiece, bytes - done));
}

// Posts the pieces of one message; `post` is MPI_Isend or MPI_Irecv.
template <class Post>
void post_pieces(std::vector<MPI_Request>& requests, std::size_t bytes, Post&& post) {
  std::size_t done = 0;
  do {
    requests.emplace_back();
    post(done, piece_of(bytes, done), &requests.back());
    done += piece_of(bytes, done);
  } while (done < bytes);
}

}  // namespace

void check_mpi(int rc, const std::string& what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  PMPI_Error_string(rc, text, &length);
  throw TransportError(what + ": " + std::string(text, length));
}

std::string MpiChannel::Transfer::text() const {
  std::string text;
  if (to >= 0)
    text = "MPI send of " + std::to_string(send_bytes) + " bytes to rank " + std::to_string(to);
  if (from >= 0) {
    text += (text.empty() ? "MPI receive of " : " and receive of ") + std::to_string(recv_bytes) +
            " bytes from rank " + std::to_string(from);
  }
  return text;
}

MpiChannel::MpiChannel(MPI_Comm comm) {
  check_mpi(PMPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  check_mpi(PMPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(PMPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(PMPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

MpiChannel::~MpiChannel() {
  int finalized = 0;
  PMPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) PMPI_Comm_free(&comm_);
}

void MpiChannel::complete(std::vector<MPI_Request>& requests, std::vector<MPI_Status>& statuses,
                          const Transfer& transfer) {
  statuses.resize(requests.size());
  // The clock is first read after 256 polls: most messages are done by then.
  std::chrono::steady_clock::time_point deadline{};
  for (int polls = 0;; ++polls) {
    int done = 0;
    const int rc =
        PMPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, statuses.data());
    if (rc != MPI_SUCCESS) check_mpi(rc, transfer.text());
    if (done) return;
    // Spin a little (a partner on another core answers in microseconds),
    // then let a partner that shares our core run.
    if (polls > polls_before_yield_) std::this_thread::yield();
    if (timeout_.count() == 0 || (polls & 255) != 255) continue;
    const auto now = std::chrono::steady_clock::now();
    if (polls == 255) deadline = now + timeout_;
    if (now > deadline) {
      for (MPI_Request& r : requests) {
        if (r != MPI_REQUEST_NULL) {
          PMPI_Cancel(&r);
          PMPI_Request_free(&r);
        }
      }
      throw UnusableTeamError(transfer.text() + ": not complete after " +
                              std::to_string(timeout_.count()) + " ms (the team's timeout)");
    }
  }
}

// Set on a thread that may not call MPI (refuse_mpi_messages_on_this_thread).
// Of external linkage: a thread-local of this file alone made GNU ld 2.40
// write a wrong offset for the drop-in's initial-exec thread-local
// (intercept.cpp's this_thread()) into libhreduce_mpi.so.
thread_local bool mpi_messages_refused = false;

namespace {

void check_thread_may_call_mpi(const MpiChannel::Transfer& transfer) {
  if (mpi_messages_refused) [[unlikely]] {
    throw Error(transfer.text() +
                ": a message from a thread that may not call MPI (the process has less than "
                "MPI_THREAD_MULTIPLE)");
  }
}
}  // namespace

void refuse_mpi_messages_on_this_thread() { mpi_messages_refused = true; }

void MpiChannel::send(int to, const void* data, std::size_t bytes, int tag) {
  // Reused: a channel serves one thread at a time, and a steady state
  // allocates nothing.
  std::vector<MPI_Request>& requests = requests_;
  std::vector<MPI_Status>& statuses = statuses_;
  requests.clear();
  const Transfer transfer{bytes, to, 0, -1};
  check_thread_may_call_mpi(transfer);
  post_pieces(requests, bytes, [&](std::size_t done, int piece, MPI_Request* r) {
    const int rc =
        PMPI_Isend(static_cast<const char*>(data) + done, piece, MPI_BYTE, to, tag, comm_, r);
    if (rc != MPI_SUCCESS) check_mpi(rc, transfer.text());
  });
  complete(requests, statuses, transfer);
}

void MpiChannel::recv(int from, void* data, std::size_t bytes, int tag) {
  sendrecv(MPI_PROC_NULL, nullptr, 0, from, data, bytes, tag);
}

void MpiChannel::sendrecv(int to, const void* send_data, std::size_t send_bytes, int from,
                          void* recv_data, std::size_t recv_bytes, int tag) {
  // Reused: a channel serves one thread at a time, and a steady state
  // allocates nothing.
  std::vector<MPI_Request>& requests = requests_;
  std::vector<MPI_Status>& statuses = statuses_;
  requests.clear();
  const Transfer transfer{send_bytes, to == MPI_PROC_NULL ? -1 : to, recv_bytes, from};
  check_thread_may_call_mpi(transfer);
  post_pieces(requests, recv_bytes, [&](std::size_t done, int piece, MPI_Request* r) {
    const int rc =
        PMPI_Irecv(static_cast<char*>(recv_data) + done, piece, MPI_BYTE, from, tag, comm_, r);
    if (rc != MPI_SUCCESS) check_mpi(rc, transfer.text());
  });
  const std::size_t receives = requests.size();
  if (to != MPI_PROC_NULL) {
    post_pieces(requests, send_bytes, [&](std::size_t done, int piece, MPI_Request* r) {
      const int rc = PMPI_Isend(static_cast<const char*>(send_data) + done, piece, MPI_BYTE, to,
                                tag, comm_, r);
      if (rc != MPI_SUCCESS) check_mpi(rc, transfer.text());
    });
  }
  complete(requests, statuses, transfer);
  std::size_t got_bytes = 0;
  for (std::size_t i = 0; i < receives; ++i) {
    int got = 0;
    PMPI_Get_count(&statuses[i], MPI_BYTE, &got);
    got_bytes += static_cast<std::size_t>(got);
  }
  if (got_bytes != recv_bytes) {
    throw TransportError(transfer.text() + ": expected " + std::to_string(recv_bytes) +
                         " bytes, got " + std::to_string(got_bytes));
  }
}

}  // namespace hreduce::detail
