// The drop-in's served nonblocking and persistent calls, kept by their
// MPI requests (the "shells", requests.hpp), and the spares: ended MPI_I*
// calls kept with their shells for the next one.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/engine/nonblocking/call_queue.hpp"
#include "src/mpi_dropin/datatypes.hpp"
#include "src/mpi_dropin/serve.hpp"

namespace hreduce::detail::mpi_dropin {

// One served call: the caller's arguments (its buffers are the call's
// until it completes), its own combiner and counts, and where it runs.
class ServedCall final : public QueuedCall {
 public:
  void run() override;

  Args args{};
  std::vector<int> recvcounts;  // reduce_scatter's, kept
  std::optional<Combiner> combiner;
  Team* team = nullptr;
  LoneMemberPath* lone = nullptr;
  CallQueue* queue = nullptr;
  // What team, lone and queue were found for (they go with the
  // communicator's state).
  MPI_Comm comm = MPI_COMM_NULL;
  unsigned generation = 0;
  std::uint64_t comm_serial = 0;         // a persistent call's communicator (comm_serial())
  MPI_Request shell = MPI_REQUEST_NULL;  // its request: the table's key
  // Ended, kept for the next call (Table). Atomic only because another
  // thread's lookup of the same request, which MPI would call erroneous,
  // may read it while its owner flips it without the table's lock.
  std::atomic<bool> spare{false};
  bool persistent = false;
  // Started and not yet ended by a completion call. Only the request's
  // owner touches it (MPI: one thread at a time per request).
  bool active = false;
  int error_class = MPI_SUCCESS;  // of the last run
  std::string error_text;
};

// Whether no call is served now: completion calls then go straight to
// PMPI_* without a lookup.
bool none_served();
// The served call of `request`, or null (MPI's own requests, and spares).
ServedCall* find(MPI_Request request);
// A spare call, out of the spares (still unseen by find()), or null.
ServedCall* take_spare();
// A spare taken for a call that is handed on after all.
void give_back(ServedCall* spare);
// `call` (a spare taken, or new and owned by `fresh`) serves the request
// *request holds (a new shell), or its own shell (a spare's).
void remember(MPI_Request* request, ServedCall* call, std::unique_ptr<ServedCall> fresh);
// An ended MPI_I* call stays as a spare with its shell where there is
// room, and then *request becomes MPI_REQUEST_NULL here. Returns whether
// it did.
bool keep_as_spare(MPI_Request* request, ServedCall* call);
// `request` leaves the table. Its call goes with it, or, where still
// running (MPI_Request_free of an active request), when it is done.
void forget(MPI_Request* request);
// A request MPI never starts: inactive, so MPI completes it at once with
// an empty status wherever it meets it.
int make_shell(MPI_Request* request);

}  // namespace hreduce::detail::mpi_dropin
