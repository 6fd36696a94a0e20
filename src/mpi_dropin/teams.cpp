#include "src/mpi_dropin/teams.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "hreduce/error.hpp"
#include "src/common/environment.hpp"
#include "src/engine/member_access.hpp"
#include "src/engine/nonblocking/call_queue.hpp"
#include "src/engine/team_state.hpp"
#include "src/hybrid/mpi_team.hpp"
#include "src/mpi_dropin/tally.hpp"

namespace hreduce::detail::mpi_dropin {
namespace {

struct CommState {
  // Never reused, unlike the communicator's handle: comm_lives().
  std::uint64_t serial = 0;
  unsigned long calls = 0;
  // Nonblocking and persistent calls (and starts of persistent requests
  // made before the team) handed on for want of a team: a barrier builds
  // it for them (build_at_barrier).
  unsigned long waited = 0;
  std::unique_ptr<Team> team;
  std::unique_ptr<LoneMemberPath> lone;  // destroyed before the team
  std::string unserved;                  // why this communicator goes to PMPI for good
  // Where nonblocking calls wait (made at the first). The team says
  // whether they are served (TeamState::nonblocking_refusal).
  std::atomic<CallQueue*> queue{nullptr};

  ~CommState() {
    // The queue finishes its calls on the team, so it goes first.
    delete queue.load(std::memory_order_relaxed);
    lone.reset();
  }
};

std::mutex registry_mutex;
// Every communicator's state, so that MPI_Finalize can release them all.
std::unordered_map<CommState*, bool>& registry() {
  static std::unordered_map<CommState*, bool> states;
  return states;
}
int comm_keyval = MPI_KEYVAL_INVALID;
int self_keyval = MPI_KEYVAL_INVALID;
// Bumped whenever a state goes, so that no thread trusts a cached lookup
// of a freed communicator whose handle MPI reused.
std::atomic<unsigned> generation{0};
std::atomic<std::uint64_t> last_serial{0};

void release(CommState* state) {
  generation.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(registry_mutex);
    if (registry().erase(state) == 0) return;  // released at finalize already
  }
  delete state;
}

int delete_comm_state(MPI_Comm, int, void* value, void*) {
  release(static_cast<CommState*>(value));
  return MPI_SUCCESS;
}

int finalize_all(MPI_Comm, int, void*, void*) {
  generation.fetch_add(1, std::memory_order_relaxed);
  std::unordered_map<CommState*, bool> states;
  {
    std::lock_guard lock(registry_mutex);
    states.swap(registry());
  }
  for (auto& entry : states) delete entry.first;
  if (settings().verbose) print_summary();
  return MPI_SUCCESS;
}

// Both keyvals, once; MPI_COMM_SELF's attribute is what runs finalize_all.
void make_keyvals() {
  static std::once_flag once;
  std::call_once(once, [] {
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &delete_comm_state, &comm_keyval, nullptr);
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &finalize_all, &self_keyval, nullptr);
    PMPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, nullptr);
  });
}

}  // namespace

const Settings& settings() {
  static const Settings s = [] {
    Settings s;
    s.enabled = flag_from_environment("HREDUCE_MPI", true);
    s.verbose = flag_from_environment("HREDUCE_MPI_VERBOSE", false);
    try {
      s.warmup = static_cast<unsigned long>(
          count_from_environment("libhreduce_mpi.so", "HREDUCE_MPI_WARMUP_CALLS", "calls",
                                 static_cast<long long>(s.warmup)));
    } catch (const Error& e) {
      // No exception may leave the library: say so, and go on.
      std::fprintf(stderr, "hreduce: %s; using %lu\n", e.what(), s.warmup);
    }
    return s;
  }();
  return s;
}

void prepare_summary() {
  if (settings().enabled && settings().verbose) make_keyvals();
}

unsigned teams_generation() { return generation.load(std::memory_order_relaxed); }

namespace {

// The state of `comm`, or null where no intercepted call has met it.
CommState* found_state(MPI_Comm comm) {
  make_keyvals();
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, comm_keyval, &value, &found);
  return found ? static_cast<CommState*>(value) : nullptr;
}

// Builds the team of `comm` (collective: every process calls it at the same
// call); on failure the communicator goes to PMPI for good.
bool build_team(CommState* state, MPI_Comm comm) {
  try {
    TeamOptions options;
    options.bind = false;  // the members are the application's own threads
    // Reading the machine with hwloc is most of building a team: once per
    // process is enough.
    static const Topology machine = Topology::discover();
    options.topology = machine;
    state->team = std::make_unique<Team>(build_mpi_team(comm, 1, options, MpiTeamOptions{}));
    state->lone = LoneMemberPath::of(state->team->member(0));
    return true;
  } catch (const std::exception& e) {
    state->unserved = std::string("building a team failed: ") + e.what();
    return false;
  }
}

CommState* state_of_comm(MPI_Comm comm) {
  CommState* state = found_state(comm);
  if (state == nullptr) {
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    state = new CommState;
    state->serial = last_serial.fetch_add(1, std::memory_order_relaxed) + 1;
    if (inter) state->unserved = "an intercommunicator";
    {
      std::lock_guard lock(registry_mutex);
      registry().emplace(state, true);
    }
    PMPI_Comm_set_attr(comm, comm_keyval, state);
  }
  return state;
}

}  // namespace

std::uint64_t comm_serial(MPI_Comm comm) { return state_of_comm(comm)->serial; }

bool comm_lives(std::uint64_t serial) {
  std::lock_guard lock(registry_mutex);
  for (const auto& entry : registry()) {
    if (entry.first->serial == serial) return true;
  }
  return false;
}

CallQueue* queue_for(MPI_Comm comm, std::string& why, Team*& team, LoneMemberPath*& lone) {
  CommState* state = state_of_comm(comm);
  if (!state->unserved.empty()) {
    why = state->unserved;
    return nullptr;
  }
  if (!state->team) {
    ++state->waited;  // the warm-up counts blocking calls only
    return nullptr;
  }
  const TeamState& team_state = state_of(state->team->member(0)).team;
  if (!team_state.nonblocking_refusal.empty()) {
    why = "the communicator's team: " + team_state.nonblocking_refusal;
    return nullptr;
  }
  team = state->team.get();
  lone = state->lone.get();
  CallQueue* queue = state->queue.load(std::memory_order_relaxed);
  if (queue == nullptr) {
    // MPI orders a communicator's collective calls: no two threads start
    // one at once.
    queue = new CallQueue(team_state.queue_thread_start, CallQueue::Starters::one_at_a_time);
    state->queue.store(queue, std::memory_order_release);
  }
  return queue;
}

Team* team_for(MPI_Comm comm, std::string& why, LoneMemberPath*& lone,
               std::atomic<CallQueue*>*& queue) {
  // The communicator of the previous call, whose team this thread found.
  struct Last {
    MPI_Comm comm = MPI_COMM_NULL;
    Team* team = nullptr;
    LoneMemberPath* lone = nullptr;
    std::atomic<CallQueue*>* queue = nullptr;
    unsigned generation = 0;
  };
  thread_local Last last;
  if (last.comm == comm && last.team != nullptr &&
      last.generation == generation.load(std::memory_order_relaxed)) {
    lone = last.lone;
    queue = last.queue;
    return last.team;
  }
  lone = nullptr;
  CommState* state = state_of_comm(comm);
  queue = &state->queue;
  if (!state->unserved.empty()) {
    why = state->unserved;
    return nullptr;
  }
  if (state->team) {
    last = {comm, state->team.get(), state->lone.get(), &state->queue,
            generation.load(std::memory_order_relaxed)};
    lone = state->lone.get();
    return state->team.get();
  }
  if (state->calls++ < settings().warmup) return nullptr;
  if (!build_team(state, comm)) {
    why = state->unserved;
    return nullptr;
  }
  lone = state->lone.get();
  return state->team.get();
}

void build_at_barrier(MPI_Comm comm) {
  CommState* state = found_state(comm);
  if (state == nullptr || state->team || !state->unserved.empty() || state->waited == 0 ||
      state->calls + state->waited < settings().warmup) {
    return;
  }
  build_team(state, comm);
}

}  // namespace hreduce::detail::mpi_dropin
