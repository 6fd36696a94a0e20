#include "src/mpi_dropin/awaiting_team.hpp"

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "src/mpi_dropin/tally.hpp"
#include "src/mpi_dropin/teams.hpp"

namespace hreduce::detail::mpi_dropin {
namespace {

struct Awaiting {
  using Calls = std::unordered_map<MPI_Request, std::unique_ptr<ServedCall>>;
  std::mutex mutex;
  Calls calls;
  std::atomic<std::size_t> size{0};  // of calls, read without the lock (any_awaiting)

  // With the lock: the call of `found`, out of the table.
  std::unique_ptr<ServedCall> take(Calls::iterator found) {
    std::unique_ptr<ServedCall> call = std::move(found->second);
    calls.erase(found);
    size.store(calls.size(), std::memory_order_release);
    return call;
  }
};

Awaiting& awaiting() {
  static Awaiting* const a = new Awaiting;  // never destroyed: used up to MPI_Finalize
  return *a;
}

}  // namespace

void await_team(MPI_Request request, std::unique_ptr<ServedCall> call) {
  Awaiting& a = awaiting();
  std::lock_guard lock(a.mutex);
  a.calls.insert_or_assign(request, std::move(call));
  a.size.store(a.calls.size(), std::memory_order_release);
}

bool any_awaiting() { return awaiting().size.load(std::memory_order_acquire) != 0; }

ServedCall* serve_where_team_ready(MPI_Request* request) {
  Awaiting& a = awaiting();
  std::unique_ptr<ServedCall> call;
  {
    std::lock_guard lock(a.mutex);
    const auto found = a.calls.find(*request);
    if (found == a.calls.end()) return nullptr;
    ServedCall& waiting = *found->second;
    // Freed, and the handle may name another communicator now: MPI keeps
    // the request's own.
    if (!comm_lives(waiting.comm_serial)) {
      a.take(found);
      return nullptr;
    }
    std::string why;
    waiting.queue = queue_for(waiting.args.comm, why, waiting.team, waiting.lone);
    if (waiting.queue == nullptr) {
      // Served never (a team that refuses nonblocking calls): MPI keeps it.
      if (!why.empty()) a.take(found);
      return nullptr;
    }
    waiting.comm = waiting.args.comm;
    waiting.generation = teams_generation();
    call = a.take(found);
  }
  ServedCall* const served = call.get();
  served_from_start(mpi_function(served->args.kind, Form::persistent), served->args.name);
  remember(request, served, std::move(call));
  return served;
}

void stop_awaiting(MPI_Request request) {
  Awaiting& a = awaiting();
  std::lock_guard lock(a.mutex);
  if (const auto found = a.calls.find(request); found != a.calls.end()) a.take(found);
}

void release_awaiting() {
  Awaiting& a = awaiting();
  Awaiting::Calls gone;
  std::lock_guard lock(a.mutex);
  gone.swap(a.calls);
  a.size.store(0, std::memory_order_release);
}

}  // namespace hreduce::detail::mpi_dropin
