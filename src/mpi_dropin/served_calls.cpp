#include "src/mpi_dropin/served_calls.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "src/mpi_dropin/requests.hpp"

namespace hreduce::detail::mpi_dropin {
namespace {

// The served calls by their requests. Calls whose request was freed while
// they ran wait in `detached` until done.
struct Table {
  std::mutex mutex;
  std::unordered_map<MPI_Request, std::unique_ptr<ServedCall>> calls;
  std::vector<std::unique_ptr<ServedCall>> detached;
  // Ended MPI_I* calls of `calls`, each kept with its shell for the next
  // MPI_I* call: allocating a call and its entry, building its combiner,
  // and making and freeing its shell were about a third of an 8-byte
  // MPI_Iallreduce (perf). find() does not see them.
  std::vector<ServedCall*> spares;
  static constexpr std::size_t kSpares = 16;
  // Calls that are not spares, detached ones included: while zero,
  // completion calls go straight to PMPI_* without a lookup.
  std::atomic<std::size_t> size{0};
  // Grows whenever a call leaves find()'s sight: a thread's remembered
  // lookup (RequestSeen) holds while this has not changed.
  std::atomic<std::uint64_t> forgotten{0};

  void count() {
    size.store(calls.size() - spares.size() + detached.size(), std::memory_order_release);
  }
};

Table& table() {
  static Table* const t = new Table;  // never destroyed: used up to the end of MPI_Finalize
  return *t;
}

}  // namespace

void ServedCall::run() {
  error_class = MPI_SUCCESS;
  error_text.clear();
  try {
    error_class = run_call(args, *combiner, team, lone, error_text);
  } catch (const Error& e) {
    error_class = class_of(e);
    error_text = e.what();
  } catch (const std::exception& e) {
    error_class = MPI_ERR_INTERN;
    error_text = e.what();
  } catch (...) {
    error_class = MPI_ERR_INTERN;
    error_text = "an unknown exception";
  }
}

bool none_served() { return table().size.load(std::memory_order_acquire) == 0; }

// This thread's last lookup is taken without the table's lock while no
// call has left the table since: a request's call lives as long as its
// entry, and only the thread that holds a request may free it (MPI). A
// start and its wait, or a persistent request's start and wait, then lock
// nothing.
ServedCall* find(MPI_Request request) {
  if (request == MPI_REQUEST_NULL || none_served()) return nullptr;
  Table& t = table();
  RequestSeen& seen = last_request_seen();
  if (seen.request == request && seen.forgotten == t.forgotten.load(std::memory_order_acquire)) {
    return static_cast<ServedCall*>(seen.call);
  }
  std::lock_guard lock(t.mutex);
  const auto found = t.calls.find(request);
  if (found == t.calls.end() || found->second->spare) return nullptr;
  seen = {request, found->second.get(), t.forgotten.load(std::memory_order_relaxed)};
  return found->second.get();
}

ServedCall* take_spare() {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  if (t.spares.empty()) return nullptr;
  ServedCall* call = t.spares.back();
  t.spares.pop_back();
  return call;
}

void give_back(ServedCall* spare) {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  t.spares.push_back(spare);
}

void remember(MPI_Request* request, ServedCall* call, std::unique_ptr<ServedCall> fresh) {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  // Detached calls that ended since: gone now.
  std::erase_if(t.detached, [](const std::unique_ptr<ServedCall>& d) { return d->done(); });
  if (fresh) {
    call->shell = *request;
    t.calls.emplace(*request, std::move(fresh));
  } else {
    *request = call->shell;
    call->spare = false;
  }
  t.count();
  last_request_seen() = {*request, call, t.forgotten.load(std::memory_order_relaxed)};
}

bool forget(MPI_Request* request, bool keep) {
  Table& t = table();
  std::unique_ptr<ServedCall> gone;
  {
    std::lock_guard lock(t.mutex);
    const auto found = t.calls.find(*request);
    if (found == t.calls.end() || found->second->spare) return false;
    ServedCall* call = found->second.get();
    keep = keep && call->done() && t.spares.size() < Table::kSpares;
    if (keep) {
      call->spare = true;
      t.spares.push_back(call);
    } else {
      if (call->done()) {
        gone = std::move(found->second);
      } else {
        t.detached.push_back(std::move(found->second));
      }
      t.calls.erase(found);
    }
    t.count();
    t.forgotten.fetch_add(1, std::memory_order_release);
  }
  if (keep) *request = MPI_REQUEST_NULL;
  return keep;
}

int make_shell(MPI_Request* request) {
  return PMPI_Send_init(nullptr, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, request);
}

void release_spare_requests() {
  std::vector<std::unique_ptr<ServedCall>> spares;
  {
    Table& t = table();
    std::lock_guard lock(t.mutex);
    for (ServedCall* spare : t.spares) {
      const auto found = t.calls.find(spare->shell);
      spares.push_back(std::move(found->second));
      t.calls.erase(found);
    }
    t.spares.clear();
    t.count();
    t.forgotten.fetch_add(1, std::memory_order_release);
  }
  for (auto& call : spares) PMPI_Request_free(&call->shell);
}

}  // namespace hreduce::detail::mpi_dropin
