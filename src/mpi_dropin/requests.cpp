#include "src/mpi_dropin/requests.hpp"

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "src/mpi_dropin/awaiting_team.hpp"
#include "src/mpi_dropin/datatypes.hpp"
#include "src/mpi_dropin/served_calls.hpp"
#include "src/mpi_dropin/tally.hpp"
#include "src/mpi_dropin/teams.hpp"

namespace hreduce::detail::mpi_dropin {
namespace {

// What MPI returns for a collective's request: an empty status.
void empty_status(MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
}

// MPI's own progress, while this thread waits for a served call beside
// requests of MPI's: a probe on a communicator no message ever reaches.
void progress() {
  static MPI_Comm quiet = [] {
    MPI_Comm c = MPI_COMM_NULL;
    PMPI_Comm_dup(MPI_COMM_SELF, &c);
    return c;
  }();
  int flag = 0;
  PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, quiet, &flag, MPI_STATUS_IGNORE);
}

// Ends served call `call` of `*request`, whose run is done: reports its
// failure, then frees an MPI_I* request (*request becomes
// MPI_REQUEST_NULL) or makes a persistent one inactive. Returns the
// call's code.
int end(MPI_Request* request, ServedCall* call, MPI_Status* status) {
  int code = MPI_SUCCESS;
  if (call->error_class != MPI_SUCCESS) {
    code = report(call->args.comm, call->error_class, call->error_text);
  }
  empty_status(status);
  call->active = false;
  if (!call->persistent && !keep_as_spare(request, call)) {
    forget(request);
    PMPI_Request_free(request);
  }
  return code;
}

// Served calls that are active among `requests`, by index, and whether
// any other request is there.
struct Sorted {
  std::vector<std::pair<int, ServedCall*>> ours;
  bool others = false;
};

Sorted sort(int count, const MPI_Request requests[]) {
  Sorted s;
  for (int i = 0; i < count; ++i) {
    ServedCall* call = find(requests[i]);
    if (call == nullptr) {
      s.others = s.others || requests[i] != MPI_REQUEST_NULL;
    } else if (call->active) {
      s.ours.emplace_back(i, call);
    }
  }
  return s;
}

bool all_done(const Sorted& s) {
  for (const auto& [i, call] : s.ours) {
    if (!call->done()) return false;
  }
  return true;
}

// The requests for PMPI_*: the served ones null, so MPI leaves them be.
std::vector<MPI_Request> without_ours(int count, const MPI_Request requests[], const Sorted& s) {
  std::vector<MPI_Request> rest(requests, requests + count);
  for (const auto& [i, call] : s.ours) rest[static_cast<std::size_t>(i)] = MPI_REQUEST_NULL;
  return rest;
}

// MPI's requests back from `rest` into `requests` (the served ones stay).
void take_back(MPI_Request requests[], const std::vector<MPI_Request>& rest, const Sorted& s) {
  std::vector<bool> ours(rest.size(), false);
  for (const auto& [i, call] : s.ours) ours[static_cast<std::size_t>(i)] = true;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (!ours[i]) requests[i] = rest[i];
  }
}

// Ends every served call of `s` (all done), after MPI ended the others
// with `rc` (statuses: MPI's, the served ones empty). A failed served call
// makes the result MPI_ERR_IN_STATUS, each status saying its own.
int end_all(MPI_Request requests[], MPI_Status statuses[], const Sorted& s, int rc) {
  bool failed = false;
  std::vector<int> codes;
  for (const auto& [i, call] : s.ours) {
    const int code = end(&requests[i], call, MPI_STATUS_IGNORE);
    codes.push_back(code);
    failed = failed || code != MPI_SUCCESS;
  }
  if (!failed) return rc;
  if (statuses != MPI_STATUSES_IGNORE) {
    if (rc == MPI_SUCCESS) {
      // MPI left its statuses' MPI_ERROR unset, as it does on success.
      for (const auto& [i, call] : s.ours) statuses[i].MPI_ERROR = MPI_SUCCESS;
    }
    for (std::size_t k = 0; k < s.ours.size(); ++k) statuses[s.ours[k].first].MPI_ERROR = codes[k];
  }
  return MPI_ERR_IN_STATUS;
}

// A persistent call made before its communicator's team: MPI's request,
// served from its first start after the team is built (awaiting_team.hpp).
int await_team_by_pmpi(std::unique_ptr<ServedCall> call, MPI_Request* request, PmpiStart pmpi) {
  const Args& a = call->args;
  handed_on(mpi_function(a.kind, Form::persistent), a.name,
            "its communicator's team is not built yet (a blocking reduction builds it, or a "
            "barrier after such calls; the request is served from its first MPI_Start after "
            "that)");
  const int rc = pmpi(request);
  if (rc == MPI_SUCCESS) await_team(*request, std::move(call));
  return rc;
}

// Whether served persistent call `call` still has its communicator's team.
// MPI keeps a freed communicator for the persistent requests made on it,
// but its team went at MPI_Comm_free (as every process's did, at the same
// call): its starts go to MPI's own request from then on.
bool team_still_there(ServedCall& call) {
  const unsigned now = teams_generation();
  if (call.generation == now) return true;
  if (!comm_lives(call.comm_serial)) return false;
  call.generation = now;
  return true;
}

}  // namespace

int start_call(const Args& a, bool persistent, MPI_Request* request, PmpiStart pmpi) {
  const MpiFunction function =
      mpi_function(a.kind, persistent ? Form::persistent : Form::nonblocking);
  // A spare taken and not yet serving goes back to the spares however this
  // ends (handed on, or an exception), or it would be lost to them.
  ServedCall* spare = nullptr;
  try {
    if (!settings().enabled) return pmpi(request);
    if (a.comm == MPI_COMM_NULL) {
      handed_on(function, a.name, "MPI_COMM_NULL");
      return pmpi(request);
    }
    // A persistent request is MPI's own (PMPI<PREFIX>_<call>_init), whose
    // starts MPI may serve again later: never a spare's shell.
    spare = persistent ? nullptr : take_spare();
    std::unique_ptr<ServedCall> fresh;
    ServedCall* const call =
        spare != nullptr ? spare : (fresh = std::make_unique<ServedCall>()).get();
    auto hand_on = [&](const std::string& why) {
      handed_on(function, a.name, why);
      if (spare != nullptr) give_back(std::exchange(spare, nullptr));
      return pmpi(request);
    };
    // A call's own combiner: the thread's kept ones last only until its
    // next call. A spare's serves again where it lasts.
    if (!call->combiner || call->args.op != a.op || call->args.type != a.type ||
        !call->combiner->lasts()) {
      call->combiner.reset();
      call->combiner.emplace(a.op, describe(a.type), a.type);
    }
    if (!call->combiner->why_not().empty()) return hand_on(call->combiner->why_not());
    if (call->comm != a.comm || call->generation != teams_generation() || call->queue == nullptr) {
      std::string why;
      call->comm = a.comm;
      call->generation = teams_generation();
      call->queue = queue_for(a.comm, why, call->team, call->lone);
      if (call->queue == nullptr && (!why.empty() || !persistent)) {
        return hand_on(why.empty() ? "its communicator's team is not built yet (a blocking "
                                     "reduction builds it, or a barrier after such calls)"
                                   : why);
      }
    }
    call->args = a;
    if (a.kind == CollectiveKind::reduce_scatter && a.recvcounts != nullptr) {
      int size = 0;
      PMPI_Comm_size(a.comm, &size);
      call->recvcounts.assign(a.recvcounts, a.recvcounts + size);
      call->args.recvcounts = call->recvcounts.data();
    }
    call->persistent = persistent;
    if (persistent) call->comm_serial = comm_serial(a.comm);
    if (call->queue == nullptr) return await_team_by_pmpi(std::move(fresh), request, pmpi);
    if (fresh) {
      if (const int rc = persistent ? pmpi(request) : make_shell(request); rc != MPI_SUCCESS) {
        return report(a.comm, rc, std::string(a.name) + ": no request");
      }
    }
    remember(request, call, std::move(fresh));
    spare = nullptr;
    count_served(function);
    if (!persistent) {
      call->active = true;
      call->queue->start(*call);
    }
    return MPI_SUCCESS;
  } catch (const std::exception& e) {
    if (spare != nullptr) give_back(spare);
    return report(a.comm, MPI_ERR_INTERN, std::string(a.name) + ": " + e.what());
  }
}

int wait(MPI_Request* request, MPI_Status* status) {
  ServedCall* call = find(*request);
  if (call == nullptr || !call->active) return PMPI_Wait(request, status);
  // A done call needs no queue, which went if its communicator was freed.
  if (!call->done()) call->queue->wait(*call, true);
  return end(request, call, status);
}

int test(MPI_Request* request, int* flag, MPI_Status* status) {
  ServedCall* call = find(*request);
  if (call == nullptr || !call->active) return PMPI_Test(request, flag, status);
  if (!call->done()) {
    progress();
    *flag = 0;
    return MPI_SUCCESS;
  }
  *flag = 1;
  return end(request, call, status);
}

int waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (none_served()) return PMPI_Waitall(count, requests, statuses);
  const Sorted s = sort(count, requests);
  if (s.ours.empty()) return PMPI_Waitall(count, requests, statuses);
  // Beside MPI's requests, this thread keeps MPI progressing and leaves
  // the served calls to the queue's thread; alone, it may run them itself.
  for (const auto& [i, call] : s.ours) {
    if (!call->done()) call->queue->wait(*call, !s.others, s.others ? &progress : nullptr);
  }
  std::vector<MPI_Request> rest = without_ours(count, requests, s);
  const int rc = PMPI_Waitall(count, rest.data(), statuses);
  take_back(requests, rest, s);
  return end_all(requests, statuses, s, rc);
}

int testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (none_served()) return PMPI_Testall(count, requests, flag, statuses);
  const Sorted s = sort(count, requests);
  if (s.ours.empty()) return PMPI_Testall(count, requests, flag, statuses);
  if (!all_done(s)) {
    progress();
    *flag = 0;
    return MPI_SUCCESS;
  }
  std::vector<MPI_Request> rest = without_ours(count, requests, s);
  const int rc = PMPI_Testall(count, rest.data(), flag, statuses);
  if (*flag == 0) return rc;  // nothing changes, as MPI wants
  take_back(requests, rest, s);
  return end_all(requests, statuses, s, rc);
}

int testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (none_served()) return PMPI_Testany(count, requests, index, flag, status);
  const Sorted s = sort(count, requests);
  if (s.ours.empty()) return PMPI_Testany(count, requests, index, flag, status);
  for (const auto& [i, call] : s.ours) {
    if (call->done()) {
      *index = i;
      *flag = 1;
      return end(&requests[i], call, status);
    }
  }
  *flag = 0;
  *index = MPI_UNDEFINED;
  if (!s.others) {
    progress();
    return MPI_SUCCESS;
  }
  std::vector<MPI_Request> rest = without_ours(count, requests, s);
  int found = MPI_UNDEFINED;
  int got = 0;
  const int rc = PMPI_Testany(count, rest.data(), &found, &got, status);
  if (got != 0 && found != MPI_UNDEFINED) {
    requests[found] = rest[static_cast<std::size_t>(found)];
    *index = found;
    *flag = 1;
  }
  return rc;
}

int waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (none_served()) return PMPI_Waitany(count, requests, index, status);
  for (;;) {
    int flag = 0;
    const int rc = testany(count, requests, index, &flag, status);
    if (flag != 0 || rc != MPI_SUCCESS) return rc;
    std::this_thread::yield();
  }
}

int testsome(int count, MPI_Request requests[], int* outcount, int indices[],
             MPI_Status statuses[]) {
  if (none_served()) return PMPI_Testsome(count, requests, outcount, indices, statuses);
  const Sorted s = sort(count, requests);
  if (s.ours.empty()) return PMPI_Testsome(count, requests, outcount, indices, statuses);
  int out = 0;
  int rc = MPI_SUCCESS;
  if (s.others) {
    std::vector<MPI_Request> rest = without_ours(count, requests, s);
    rc = PMPI_Testsome(count, rest.data(), &out, indices, statuses);
    if (out == MPI_UNDEFINED) out = 0;
    for (int k = 0; k < out; ++k) requests[indices[k]] = rest[static_cast<std::size_t>(indices[k])];
  }
  bool failed = false;
  for (const auto& [i, call] : s.ours) {
    if (!call->done()) continue;
    MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[out];
    const int code = end(&requests[i], call, st);
    if (code != MPI_SUCCESS) {
      failed = true;
      if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = code;
    }
    indices[out++] = i;
  }
  if (out == 0) progress();
  *outcount = out;
  return failed ? MPI_ERR_IN_STATUS : rc;
}

int waitsome(int count, MPI_Request requests[], int* outcount, int indices[],
             MPI_Status statuses[]) {
  if (none_served()) return PMPI_Waitsome(count, requests, outcount, indices, statuses);
  for (;;) {
    const int rc = testsome(count, requests, outcount, indices, statuses);
    if (*outcount != 0 || rc != MPI_SUCCESS) return rc;
    std::this_thread::yield();
  }
}

int request_free(MPI_Request* request) {
  if (find(*request) != nullptr) forget(request);  // a running call ends on its own
  if (any_awaiting()) stop_awaiting(*request);
  return PMPI_Request_free(request);
}

int request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  ServedCall* call = find(request);
  if (call == nullptr || !call->active) return PMPI_Request_get_status(request, flag, status);
  *flag = call->done() ? 1 : 0;
  if (*flag != 0) {
    empty_status(status);
  } else {
    progress();
  }
  return MPI_SUCCESS;
}

int start(MPI_Request* request) {
  ServedCall* call = find(*request);
  if (call == nullptr && any_awaiting()) call = serve_where_team_ready(request);
  if (call != nullptr && !call->active && !team_still_there(*call)) {
    handed_on(mpi_function(call->args.kind, Form::persistent), call->args.name,
              "its communicator was freed (its team went with it; MPI keeps the communicator "
              "for the request)");
    forget(request);  // the request stays, MPI's own
    call = nullptr;
  }
  if (call == nullptr) return PMPI_Start(request);
  if (call->active) {
    return report(call->args.comm, MPI_ERR_REQUEST,
                  std::string("MPI_Start: the request of ") + call->args.name + " is active");
  }
  call->active = true;
  call->queue->start(*call);
  return MPI_SUCCESS;
}

int startall(int count, MPI_Request requests[]) {
  if (none_served() && !any_awaiting()) return PMPI_Startall(count, requests);
  for (int i = 0; i < count; ++i) {
    const int rc = start(&requests[i]);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

int cancel(MPI_Request* request) {
  ServedCall* call = find(*request);
  if (call == nullptr) return PMPI_Cancel(request);
  return report(call->args.comm, MPI_ERR_REQUEST,
                std::string("MPI_Cancel: the request of ") + call->args.name +
                    ", a collective, cannot be cancelled (MPI forbids it)");
}

}  // namespace hreduce::detail::mpi_dropin
