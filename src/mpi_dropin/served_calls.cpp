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
  // One more spare, passed on without the lock: a loop of MPI_Iallreduce
  // and MPI_Wait takes its call from here and puts it back with an
  // exchange and a compare-exchange, where taking a spare, remembering the
  // call and forgetting it took three locks and a hash lookup.
  std::atomic<ServedCall*> quick{nullptr};
  // Calls that are not spares, detached ones included: while zero,
  // completion calls go straight to PMPI_* without a lookup. Counted up
  // and down where calls change state, never recomputed, so that the
  // lock-free paths and the locked ones cannot overwrite each other.
  std::atomic<std::size_t> size{0};
  // Grows whenever a call leaves the table: a thread's remembered lookup
  // (RequestSeen) holds while this has not changed. A call that becomes a
  // spare does not leave: it keeps its shell, so a lookup of that shell
  // still names it, and only its owner held the shell.
  std::atomic<std::uint64_t> forgotten{0};

  // Detached calls that ended since: gone now (with the lock).
  void drop_ended_detached() {
    const std::size_t ended =
        std::erase_if(detached, [](const std::unique_ptr<ServedCall>& d) { return d->done(); });
    if (ended > 0) size.fetch_sub(ended, std::memory_order_release);
  }
};

Table& table() {
  static Table* const t = new Table;  // never destroyed: used up to the end of MPI_Finalize
  return *t;
}

// Whether the application calls MPI one call at a time (below
// MPI_THREAD_MULTIPLE), each call ordered before the next: then the quick
// spare and the count change by plain loads and stores. A read-modify-write
// there waits for the previous call's stores to leave the store buffer,
// stores to lines other processes read: in a loop of 8-byte
// MPI_Iallreduce and MPI_Wait the four of them cost 0.026-0.030 us of a
// 0.37 us call, the queue's two (src/engine/nonblocking/call_queue.hpp)
// about 0.01. The queue's thread never touches the table.
bool calls_one_at_a_time() {
  static const bool one = [] {
    int level = MPI_THREAD_MULTIPLE;
    PMPI_Query_thread(&level);
    return level < MPI_THREAD_MULTIPLE;
  }();
  return one;
}

void add_to_size(Table& t, std::size_t n) {
  if (calls_one_at_a_time()) {
    t.size.store(t.size.load(std::memory_order_relaxed) + n, std::memory_order_release);
  } else {
    t.size.fetch_add(n, std::memory_order_release);
  }
}

void take_from_size(Table& t, std::size_t n) {
  if (calls_one_at_a_time()) {
    t.size.store(t.size.load(std::memory_order_relaxed) - n, std::memory_order_release);
  } else {
    t.size.fetch_sub(n, std::memory_order_release);
  }
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
  if (found == t.calls.end() || found->second->spare.load(std::memory_order_relaxed)) {
    return nullptr;
  }
  seen = {request, found->second.get(), t.forgotten.load(std::memory_order_relaxed)};
  return found->second.get();
}

ServedCall* take_spare() {
  Table& t = table();
  if (ServedCall* call = t.quick.load(std::memory_order_relaxed); call != nullptr) {
    if (calls_one_at_a_time()) {
      t.quick.store(nullptr, std::memory_order_relaxed);
      return call;
    }
    if ((call = t.quick.exchange(nullptr, std::memory_order_acquire)) != nullptr) return call;
  }
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
  if (!fresh) {
    // A spare: its entry and shell are still there.
    *request = call->shell;
    call->spare.store(false, std::memory_order_relaxed);
    add_to_size(t, 1);
  } else {
    std::lock_guard lock(t.mutex);
    t.drop_ended_detached();
    call->shell = *request;
    t.calls.emplace(*request, std::move(fresh));
    t.size.fetch_add(1, std::memory_order_release);
  }
  last_request_seen() = {*request, call, t.forgotten.load(std::memory_order_acquire)};
}

bool keep_as_spare(MPI_Request* request, ServedCall* call) {
  if (!call->done()) return false;
  Table& t = table();
  call->spare.store(true, std::memory_order_relaxed);
  ServedCall* none = nullptr;
  const bool kept_quick =
      t.quick.load(std::memory_order_relaxed) == nullptr &&
      (calls_one_at_a_time()
           ? (t.quick.store(call, std::memory_order_relaxed), true)
           : t.quick.compare_exchange_strong(none, call, std::memory_order_release));
  if (!kept_quick) {
    std::lock_guard lock(t.mutex);
    if (t.spares.size() >= Table::kSpares) {
      call->spare.store(false, std::memory_order_relaxed);
      return false;
    }
    t.spares.push_back(call);
  }
  take_from_size(t, 1);
  *request = MPI_REQUEST_NULL;
  return true;
}

void forget(MPI_Request* request) {
  Table& t = table();
  std::unique_ptr<ServedCall> gone;
  std::lock_guard lock(t.mutex);
  const auto found = t.calls.find(*request);
  if (found == t.calls.end() || found->second->spare.load(std::memory_order_relaxed)) return;
  t.drop_ended_detached();
  if (found->second->done()) {
    gone = std::move(found->second);
    t.size.fetch_sub(1, std::memory_order_release);
  } else {
    t.detached.push_back(std::move(found->second));
  }
  t.calls.erase(found);
  t.forgotten.fetch_add(1, std::memory_order_release);
}

int make_shell(MPI_Request* request) {
  return PMPI_Send_init(nullptr, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, request);
}

void release_spare_requests() {
  std::vector<std::unique_ptr<ServedCall>> spares;
  {
    Table& t = table();
    std::lock_guard lock(t.mutex);
    if (ServedCall* quick = t.quick.exchange(nullptr, std::memory_order_acquire)) {
      t.spares.push_back(quick);
    }
    for (ServedCall* spare : t.spares) {
      const auto found = t.calls.find(spare->shell);
      spares.push_back(std::move(found->second));
      t.calls.erase(found);
    }
    t.spares.clear();
    t.forgotten.fetch_add(1, std::memory_order_release);
  }
  for (auto& call : spares) PMPI_Request_free(&call->shell);
}

}  // namespace hreduce::detail::mpi_dropin
