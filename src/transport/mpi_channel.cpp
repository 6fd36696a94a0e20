#include "src/transport/mpi_channel.hpp"

#include <algorithm>
#include <climits>
#include <vector>

#include "hreduce/error.hpp"

namespace hreduce::detail {
namespace {

// MPI counts are ints: longer messages go as several pieces with the same
// tag, which MPI delivers in order.
constexpr std::size_t kPiece = std::size_t{1} << 30;

int piece_of(std::size_t bytes, std::size_t done) {
  return static_cast<int>(std::min(kPiece, bytes - done));
}

}  // namespace

void check_mpi(int rc, const std::string& what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error(what + ": " + std::string(text, length));
}

MpiChannel::MpiChannel(MPI_Comm comm) {
  check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

MpiChannel::~MpiChannel() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiChannel::send(int to, const void* data, std::size_t bytes, int tag) {
  std::size_t done = 0;
  do {
    const int piece = piece_of(bytes, done);
    check_mpi(MPI_Send(static_cast<const char*>(data) + done, piece, MPI_BYTE, to, tag, comm_),
              "MPI_Send of " + std::to_string(piece) + " bytes to rank " + std::to_string(to));
    done += piece;
  } while (done < bytes);
}

void MpiChannel::recv(int from, void* data, std::size_t bytes, int tag) {
  std::size_t done = 0;
  do {
    const int piece = piece_of(bytes, done);
    MPI_Status status;
    check_mpi(MPI_Recv(static_cast<char*>(data) + done, piece, MPI_BYTE, from, tag, comm_, &status),
              "MPI_Recv of " + std::to_string(piece) + " bytes from rank " + std::to_string(from));
    int got = 0;
    MPI_Get_count(&status, MPI_BYTE, &got);
    if (got != piece) {
      throw Error("MPI_Recv from rank " + std::to_string(from) + ": expected " +
                  std::to_string(piece) + " bytes, got " + std::to_string(got));
    }
    done += piece;
  } while (done < bytes);
}

void MpiChannel::sendrecv(int to, const void* send_data, std::size_t send_bytes, int from,
                          void* recv_data, std::size_t recv_bytes, int tag) {
  if (send_bytes > kPiece || recv_bytes > kPiece) {
    // Rare: every piece both ways posted at once, then waited for.
    std::vector<MPI_Request> requests;
    for (std::size_t done = 0; done < recv_bytes || done == 0; done += kPiece) {
      requests.emplace_back();
      check_mpi(MPI_Irecv(static_cast<char*>(recv_data) + done, piece_of(recv_bytes, done),
                          MPI_BYTE, from, tag, comm_, &requests.back()),
                "MPI_Irecv from rank " + std::to_string(from));
      if (recv_bytes == 0) break;
    }
    for (std::size_t done = 0; done < send_bytes || done == 0; done += kPiece) {
      requests.emplace_back();
      check_mpi(MPI_Isend(static_cast<const char*>(send_data) + done, piece_of(send_bytes, done),
                          MPI_BYTE, to, tag, comm_, &requests.back()),
                "MPI_Isend to rank " + std::to_string(to));
      if (send_bytes == 0) break;
    }
    check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
              "MPI_Waitall");
    return;
  }
  MPI_Status status;
  check_mpi(MPI_Sendrecv(send_data, static_cast<int>(send_bytes), MPI_BYTE, to, tag, recv_data,
                         static_cast<int>(recv_bytes), MPI_BYTE, from, tag, comm_, &status),
            "MPI_Sendrecv with ranks " + std::to_string(to) + " and " + std::to_string(from));
  int got = 0;
  MPI_Get_count(&status, MPI_BYTE, &got);
  if (static_cast<std::size_t>(got) != recv_bytes) {
    throw Error("MPI_Sendrecv from rank " + std::to_string(from) + ": expected " +
                std::to_string(recv_bytes) + " bytes, got " + std::to_string(got));
  }
}

}  // namespace hreduce::detail
