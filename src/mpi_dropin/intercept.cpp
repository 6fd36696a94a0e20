// The MPI entry points the drop-in library defines. Linked before libmpi
// (or preloaded), these strong definitions take the place of Open MPI's
// MPI_* symbols, which are weak aliases of its PMPI_* ones. Everything here,
// and everything hreduce does on the library's behalf, calls only PMPI_*.
//
// Each call either runs on the communicator's hreduce team (the calling
// thread acting as its process's one member) or goes to the matching
// PMPI_* call unchanged. No C++ exception leaves these functions: hreduce's
// errors become MPI error codes passed to the communicator's error handler.
#include <mpi.h>

#include <array>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "hreduce/error.hpp"
#include "hreduce/team.hpp"
#include "src/engine/member_access.hpp"
#include "src/engine/nonblocking/call_queue.hpp"
#include "src/mpi_dropin/awaiting_team.hpp"
#include "src/mpi_dropin/datatypes.hpp"
#include "src/mpi_dropin/error_text.hpp"
#include "src/mpi_dropin/requests.hpp"
#include "src/mpi_dropin/serve.hpp"
#include "src/mpi_dropin/tally.hpp"
#include "src/mpi_dropin/teams.hpp"

namespace hreduce::detail::mpi_dropin {
namespace {

// The MPI class of an argument that this process alone can see is wrong.
int local_error(const Args& a, int rank, int size) {
  if (a.count < 0) return MPI_ERR_COUNT;
  if (a.kind == CollectiveKind::reduce && (a.root < 0 || a.root >= size)) return MPI_ERR_ROOT;
  // MPI_IN_PLACE belongs to the root of a reduce only.
  if (a.kind == CollectiveKind::reduce && a.send == MPI_IN_PLACE && rank != a.root) {
    return MPI_ERR_ARG;
  }
  if (a.kind == CollectiveKind::reduce_scatter) {
    if (a.recvcounts == nullptr) return MPI_ERR_COUNT;
    for (int r = 0; r < size; ++r) {
      if (a.recvcounts[r] < 0) return MPI_ERR_COUNT;
    }
  }
  return MPI_SUCCESS;
}

// What this thread's previous call resolved: programs repeat the same
// call on the same communicator, and finding its combiner and team again,
// each behind a thread-local lookup of its own, was a sixth of a small
// call.
// Its null handles are plain nulls: Open MPI's MPI_*_NULL are casts, which
// would make the thread-local start at run time, behind a guard.
struct Recent {
  MPI_Comm comm = nullptr;
  MPI_Datatype type = nullptr;
  MPI_Op op = nullptr;
  unsigned generation = 0;  // teams_generation() when found
  // combiner_for()'s kept one: valid until this thread's next combiner_for
  // miss, which comes only after this is forgotten.
  const Combiner* combiner = nullptr;
  Team* team = nullptr;
  LoneMemberPath* lone = nullptr;
  std::atomic<CallQueue*>* queue = nullptr;
};

struct ThisThread {
  Recent recent;
  RequestSeen request_seen;
  // Calls served (teams.hpp says why not in a shared counter).
  ServedTally tally;
};

void count_served(ServedTally& tally, CollectiveKind kind) {
  if (!tally.counted) count_in(tally);
  tally.add(mpi_function(kind));
}

// A reduce_scatter whose counts are all 0: every process passes the same
// counts, so each sees alone that there is nothing to agree on or move,
// and MPI lets the call return at once, as Open MPI's does.
bool nothing_to_do(const Args& a, int size) {
  if (a.kind != CollectiveKind::reduce_scatter) return false;
  for (int r = 0; r < size; ++r) {
    if (a.recvcounts[r] != 0) return false;
  }
  return true;
}

// A blocking call on a found team: after the communicator's nonblocking
// calls started before it (MPI's order), then counted or reported.
int serve_on(const Args& a, const Combiner& combiner, Team* team, LoneMemberPath* lone,
             std::atomic<CallQueue*>* queue, ThisThread& here) {
  if (CallQueue* q = queue->load(std::memory_order_acquire); q != nullptr && !q->idle()) {
    q->drain();
  }
  std::string why;
  const int code = run_call(a, combiner, team, lone, why);
  if (code != MPI_SUCCESS) return report(a.comm, code, why);
  count_served(here.tally, a.kind);
  return MPI_SUCCESS;
}

ThisThread& this_thread() {
  // Initial-exec: read at a fixed offset from the thread pointer, where the
  // default model for a shared library called __tls_get_addr at each use.
  // Its few bytes fit the room glibc keeps for such variables in libraries
  // opened later (dlopen).
  [[gnu::tls_model("initial-exec")]] thread_local ThisThread here;
  return here;
}

}  // namespace

RequestSeen& last_request_seen() { return this_thread().request_seen; }

// An error code of class `error_class` whose string is `text` (MPI_Error_string
// then shows hreduce's message), passed to the communicator's error handler.
int report(MPI_Comm comm, int error_class, const std::string& text) {
  static std::mutex mutex;
  static std::map<int, int> code_of_class;
  int code = error_class;
  {
    std::lock_guard lock(mutex);
    auto found = code_of_class.find(error_class);
    if (found == code_of_class.end()) {
      int added = error_class;
      if (PMPI_Add_error_code(error_class, &added) != MPI_SUCCESS) added = error_class;
      found = code_of_class.emplace(error_class, added).first;
    }
    code = found->second;
    if (code != error_class) {
      PMPI_Add_error_string(code, dropin_message(text, MPI_MAX_ERROR_STRING - 1).c_str());
    }
  }
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

// The class of an error hreduce found across processes: from its kind
// alone, never its words (docs/errors.md).
int class_of(const Error& e) {
  switch (e.kind()) {
    case ErrorKind::count_mismatch: return MPI_ERR_COUNT;
    case ErrorKind::root_mismatch: return MPI_ERR_ROOT;
    case ErrorKind::mismatch: return MPI_ERR_ARG;
    case ErrorKind::argument:
    case ErrorKind::op:
    case ErrorKind::unusable:
    case ErrorKind::transport: break;
  }
  return MPI_ERR_OTHER;
}

int run_call(const Args& a, const Combiner& combiner, Team* team, LoneMemberPath* lone,
             std::string& why) {
  // One member per process, in communicator rank order: team ranks are
  // communicator ranks (the lean path knows them without a call).
  const int rank = lone != nullptr ? lone->rank() : team->member(0).rank();
  const int size = lone != nullptr ? lone->size() : team->member(0).size();
  const int problem = local_error(a, rank, size);
  if (problem != MPI_SUCCESS) {
    // Take part anyway, with arguments the team rejects, so that the
    // other processes learn it at once instead of waiting for us.
    CallArgs refused(a.kind, nullptr, nullptr, 1, nullptr, SIZE_MAX, SIZE_MAX, 0, combiner.erased(),
                     kDefaultCollectiveOptions);
    refused.options = nullptr;
    try {
      execute_erased(team->member(0), refused);
    } catch (const Error&) {
    }
    why = std::string(a.name) + ": invalid argument on this process";
    return problem;
  }
  if (nothing_to_do(a, size)) return MPI_SUCCESS;
  const std::size_t per = combiner.per_element();
  const bool in_place = a.send == MPI_IN_PLACE;
  const void* in = in_place ? a.recv : a.send;
  void* out = a.recv;
  if (a.kind == CollectiveKind::reduce && rank != a.root) out = nullptr;
  std::size_t n = static_cast<std::size_t>(a.count) * per;
  // reduce_scatter's counts in the combiner's elements: on the stack up to
  // kCountsOnStack processes, so that its fast path allocates nothing.
  constexpr int kCountsOnStack = 64;
  std::array<std::size_t, kCountsOnStack> few;
  std::vector<std::size_t> many;
  std::size_t* counts = nullptr;
  if (a.kind == CollectiveKind::reduce_scatter) {
    if (size > kCountsOnStack) many.resize(static_cast<std::size_t>(size));
    counts = size > kCountsOnStack ? many.data() : few.data();
    for (int r = 0; r < size; ++r) {
      counts[r] = static_cast<std::size_t>(a.recvcounts[r]) * per;
    }
    n = static_cast<std::size_t>(size);
  }
  if (lone != nullptr && lone->run(a.kind, in, out, n, a.root, combiner.erased(), counts)) {
    return MPI_SUCCESS;
  }
  CallArgs call(a.kind, in, out, n, counts, SIZE_MAX, SIZE_MAX, a.root, combiner.erased(),
                kDefaultCollectiveOptions);
  call.options = nullptr;  // the team's defaults
  execute_erased(team->member(0), call);
  return MPI_SUCCESS;
}

int serve(const Args& a, PmpiCall pmpi) {
  ThisThread& here = this_thread();
  Recent& recent = here.recent;
  try {
    // The repeated call: everything else below was settled when this
    // thread remembered it (interception on, a communicator that is not
    // null, its team built).
    if (recent.comm == a.comm && recent.type == a.type && recent.op == a.op &&
        recent.generation == teams_generation() && recent.combiner != nullptr) [[likely]] {
      return serve_on(a, *recent.combiner, recent.team, recent.lone, recent.queue, here);
    }
    recent = {};
    if (!settings().enabled) return pmpi();
    if (a.comm == MPI_COMM_NULL) {
      handed_on(mpi_function(a.kind), a.name, "MPI_COMM_NULL");
      return pmpi();
    }
    const unsigned generation = teams_generation();
    std::optional<Combiner> fresh;
    const Combiner& combiner = combiner_for(a.op, a.type, fresh);
    if (!combiner.why_not().empty()) {
      handed_on(mpi_function(a.kind), a.name, combiner.why_not());
      return pmpi();
    }
    std::string why;
    LoneMemberPath* lone = nullptr;
    std::atomic<CallQueue*>* queue = nullptr;
    Team* team = team_for(a.comm, why, lone, queue);
    if (team == nullptr) {
      if (why.empty()) {
        handed_on_during_warmup(mpi_function(a.kind));
      } else {
        handed_on(mpi_function(a.kind), a.name, why);
      }
      return pmpi();
    }
    if (!fresh) recent = {a.comm, a.type, a.op, generation, &combiner, team, lone, queue};
    return serve_on(a, combiner, team, lone, queue, here);
  } catch (const Error& e) {
    return report(a.comm, class_of(e), e.what());
  } catch (const std::exception& e) {
    return report(a.comm, MPI_ERR_INTERN, e.what());
  } catch (...) {
    return report(a.comm, MPI_ERR_INTERN, "an unknown exception");
  }
}

bool empty_block_done(MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  // A block of no elements is that on every process (MPI wants the same
  // count everywhere), so the call has nothing to agree on or move: it
  // returns at once, as Open MPI's does, where serving it synchronised
  // the processes at many times Open MPI's cost. Null handles still go the
  // way that reports them.
  // Kept here: settings() is in another file, a call through the PLT.
  static const bool enabled = settings().enabled;
  if (comm == MPI_COMM_NULL || type == MPI_DATATYPE_NULL || op == MPI_OP_NULL || !enabled) {
    return false;
  }
  count_served(this_thread().tally, CollectiveKind::reduce_scatter_block);
  return true;
}

int count_call(const char* name, CollectiveKind kind, CountCall pmpi, const void* send, void* recv,
               int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (kind == CollectiveKind::reduce_scatter_block && count == 0 &&
      empty_block_done(type, op, comm)) {
    return MPI_SUCCESS;
  }
  const Args a{name, kind, send, recv, count, nullptr, type, op, 0, comm};
  return serve(a, [&] { return pmpi(send, recv, count, type, op, comm); });
}

void count_served(MpiFunction function) {
  ServedTally& tally = this_thread().tally;
  if (!tally.counted) count_in(tally);
  tally.add(function);
}

}  // namespace hreduce::detail::mpi_dropin

using hreduce::detail::CollectiveKind;
using hreduce::detail::mpi_dropin::Args;
using hreduce::detail::mpi_dropin::count_call;
using hreduce::detail::mpi_dropin::empty_block_done;
using hreduce::detail::mpi_dropin::serve;

extern "C" {

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
  return count_call("MPI_Allreduce", CollectiveKind::allreduce, &PMPI_Allreduce, sendbuf, recvbuf,
                    count, datatype, op, comm);
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm) {
  return count_call("MPI_Scan", CollectiveKind::scan, &PMPI_Scan, sendbuf, recvbuf, count, datatype,
                    op, comm);
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm) {
  return count_call("MPI_Exscan", CollectiveKind::exscan, &PMPI_Exscan, sendbuf, recvbuf, count,
                    datatype, op, comm);
}

// Not inlined into MPI_Reduce_scatter_block: there, the call's arguments
// and the PMPI call's captures were built before the empty block's test.
[[gnu::noinline]] static int block_call(const void* sendbuf, void* recvbuf, int recvcount,
                                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return count_call("MPI_Reduce_scatter_block", CollectiveKind::reduce_scatter_block,
                    &PMPI_Reduce_scatter_block, sendbuf, recvbuf, recvcount, datatype, op, comm);
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (recvcount == 0 && empty_block_done(datatype, op, comm)) return MPI_SUCCESS;
  return block_call(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm) {
  const Args a{
      "MPI_Reduce", CollectiveKind::reduce, sendbuf, recvbuf, count, nullptr, datatype, op, root,
      comm};
  return serve(a, [&] { return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm); });
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  const Args a{"MPI_Reduce_scatter",
               CollectiveKind::reduce_scatter,
               sendbuf,
               recvbuf,
               0,
               recvcounts,
               datatype,
               op,
               0,
               comm};
  return serve(
      a, [&] { return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm); });
}

// A blocking collective on which a communicator whose reductions are all
// nonblocking gets its team (teams.hpp).
int MPI_Barrier(MPI_Comm comm) {
  using namespace hreduce::detail::mpi_dropin;
  if (settings().enabled && comm != MPI_COMM_NULL) build_at_barrier(comm);
  return PMPI_Barrier(comm);
}

// Only for HREDUCE_MPI_VERBOSE's summary, which a program with no
// intercepted call would otherwise not get.
int MPI_Finalize() {
  hreduce::detail::mpi_dropin::prepare_summary();
  hreduce::detail::mpi_dropin::release_spare_requests();
  hreduce::detail::mpi_dropin::release_awaiting();
  return PMPI_Finalize();
}

}  // extern "C"
