// make_mpi_team: discovers the processes' thread counts and nodes with
// point-to-point messages and builds the team's process group.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "hreduce/error.hpp"
#include "hreduce/mpi.hpp"
#include "src/common/environment.hpp"
#include "src/engine/member_access.hpp"
#include "src/engine/team_state.hpp"
#include "src/hybrid/inter_process_group.hpp"
#include "src/hybrid/mpi_team.hpp"
#include "src/transport/mpi_channel.hpp"
#include "src/transport/tags.hpp"

namespace hreduce {
namespace {

const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

// Every process's `value`, in rank order: sent to rank 0, which broadcasts
// the list (construction only, so plainness beats speed).
std::vector<int> allgather(detail::Channel& channel, int value) {
  const int P = channel.size();
  std::vector<int> all(P);
  if (channel.rank() == 0) {
    all[0] = value;
    for (int p = 1; p < P; ++p) {
      channel.recv(p, &all[p], sizeof(int), detail::tags::process_allgather);
    }
  } else {
    channel.send(0, &value, sizeof(int), detail::tags::process_allgather);
  }
  detail::inter::binomial_broadcast(channel, all.data(), P * sizeof(int), 0);
  return all;
}

int procs_per_node(const MpiTeamOptions& mpi) {
  return static_cast<int>(detail::count_from_environment("make_mpi_team", "HREDUCE_PROCS_PER_NODE",
                                                         "processes", mpi.procs_per_node));
}

// Node index of every process: virtual nodes of k consecutive ranks, or the
// shared-memory domains MPI reports, numbered in order of their lowest rank.
std::vector<int> discover_nodes(detail::MpiChannel& channel, int k) {
  const int P = channel.size();
  std::vector<int> node_of(P);
  if (k > 0) {
    for (int p = 0; p < P; ++p) node_of[p] = p / k;
    return node_of;
  }
  MPI_Comm node_comm;
  detail::check_mpi(PMPI_Comm_split_type(channel.comm(), MPI_COMM_TYPE_SHARED, channel.rank(),
                                         MPI_INFO_NULL, &node_comm),
                    "MPI_Comm_split_type");
  MPI_Group node_group, world_group;
  PMPI_Comm_group(node_comm, &node_group);
  PMPI_Comm_group(channel.comm(), &world_group);
  const int zero = 0;
  int lowest = 0;
  detail::check_mpi(PMPI_Group_translate_ranks(node_group, 1, &zero, world_group, &lowest),
                    "MPI_Group_translate_ranks");
  PMPI_Group_free(&node_group);
  PMPI_Group_free(&world_group);
  PMPI_Comm_free(&node_comm);
  const std::vector<int> lowest_of = allgather(channel, lowest);
  std::vector<int> leaders;
  for (int p = 0; p < P; ++p) {
    if (lowest_of[p] == p) leaders.push_back(p);
  }
  for (int p = 0; p < P; ++p) {
    node_of[p] =
        static_cast<int>(std::find(leaders.begin(), leaders.end(), lowest_of[p]) - leaders.begin());
  }
  return node_of;
}

// TeamOptions::timeout as the engine will apply it (HREDUCE_TIMEOUT_MS
// overrides it there too), with the cross-process default for zero.
std::chrono::milliseconds effective_timeout(const TeamOptions& options, const MpiTeamOptions& mpi) {
  const auto timeout = detail::duration_from_environment("make_mpi_team", "HREDUCE_TIMEOUT_MS",
                                                         "milliseconds", options.timeout);
  return timeout.count() > 0 ? timeout : mpi.default_timeout;
}

detail::InterAlgorithm inter_algorithm(AllreduceAlgorithm algorithm) {
  using detail::InterAlgorithm;
  switch (algorithm) {
    case AllreduceAlgorithm::automatic: return InterAlgorithm::automatic;
    case AllreduceAlgorithm::recursive_doubling: return InterAlgorithm::recursive_doubling;
    case AllreduceAlgorithm::rabenseifner: return InterAlgorithm::rabenseifner;
    case AllreduceAlgorithm::ring: return InterAlgorithm::ring;
  }
  throw ArgumentError("make_mpi_team: MpiTeamOptions::allreduce is " +
                      std::to_string(static_cast<int>(algorithm)) + ", not an AllreduceAlgorithm");
}

detail::InterAlgorithm inter_algorithm(ReduceScatterAlgorithm algorithm) {
  using detail::InterAlgorithm;
  switch (algorithm) {
    case ReduceScatterAlgorithm::automatic: return InterAlgorithm::automatic;
    case ReduceScatterAlgorithm::pairwise: return InterAlgorithm::pairwise;
    case ReduceScatterAlgorithm::reduce_then_scatter: return InterAlgorithm::reduce_then_scatter;
  }
  throw ArgumentError("make_mpi_team: MpiTeamOptions::reduce_scatter is " +
                      std::to_string(static_cast<int>(algorithm)) +
                      ", not a ReduceScatterAlgorithm");
}

}  // namespace

namespace {

// Whether the team's nonblocking calls can run on queue threads
// (src/engine/nonblocking/call_queue.hpp): the same answer on every
// process, from the least thread level any process has. A thread of its
// own may send MPI messages only under MPI_THREAD_MULTIPLE; a team whose
// processes all meet in one node's segment sends none during a call, and
// its queue threads refuse to, to be sure.
void settle_nonblocking(Team& team, int least_level) {
  detail::TeamState& state = detail::state_of(team.member(0)).team;
  if (least_level == MPI_THREAD_MULTIPLE) return;
  const auto* group = dynamic_cast<const detail::InterProcessGroup*>(state.group.get());
  const bool sends = group != nullptr && group->processes() > 1 &&
                     (group->node() == nullptr || group->multi_node());
  if (sends) {
    state.nonblocking_refusal =
        "its processes exchange messages, and nonblocking calls (run by a thread of their own) "
        "need MPI_THREAD_MULTIPLE on every process (docs/nonblocking.md)";
  } else {
    state.queue_thread_start = &detail::refuse_mpi_messages_on_this_thread;
  }
}

}  // namespace

Team make_mpi_team(MPI_Comm comm, int threads, TeamOptions options, const MpiTeamOptions& mpi) {
  int initialized = 0;
  PMPI_Initialized(&initialized);
  if (!initialized) throw ArgumentError("make_mpi_team: MPI is not initialised");
  int level = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&level);
  if (level < MPI_THREAD_SERIALIZED) {
    throw ArgumentError(
        std::string("make_mpi_team: MPI runs at thread level ") + level_name(level) +
        ", but hreduce calls MPI from the thread that runs each process's member 0 (a "
        "worker thread under Team::run), one call at a time; initialise MPI with "
        "MPI_Init_thread(..., MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE, ...)");
  }
  return detail::build_mpi_team(comm, threads, std::move(options), mpi);
}

Team detail::build_mpi_team(MPI_Comm comm, int threads, TeamOptions options,
                            const MpiTeamOptions& mpi) {
  auto channel = std::make_unique<detail::MpiChannel>(comm);
  // Every process learns every thread count and whether every process's
  // options are valid, and all refuse a bad one together instead of leaving
  // the others waiting.
  detail::InterOptions inter;
  std::string bad_options;
  try {
    inter.allreduce = inter_algorithm(mpi.allreduce);
    inter.reduce_scatter = inter_algorithm(mpi.reduce_scatter);
  } catch (const ArgumentError& e) {
    bad_options = e.what();
  }
  const std::vector<int> valid = allgather(*channel, bad_options.empty() ? 1 : 0);
  if (!bad_options.empty()) throw ArgumentError(bad_options);
  for (int p = 0; p < channel->size(); ++p) {
    if (valid[p] == 0) {
      throw ArgumentError("make_mpi_team: process " + std::to_string(p) +
                          " passed invalid MpiTeamOptions (its error says which)");
    }
  }
  const std::vector<int> counts = allgather(*channel, threads);
  for (int p = 0; p < channel->size(); ++p) {
    if (counts[p] < 1) {
      throw ArgumentError("make_mpi_team: process " + std::to_string(p) + " contributes " +
                          std::to_string(counts[p]) + " threads; each process needs at least 1");
    }
  }
  int level = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&level);
  const std::vector<int> levels = allgather(*channel, level);
  const int least_level = *std::min_element(levels.begin(), levels.end());
  const int per_node = procs_per_node(mpi);
  std::vector<int> node_of = discover_nodes(*channel, per_node);
  // The members of every process on this machine, whatever virtual nodes
  // HREDUCE_PROCS_PER_NODE makes: where they outnumber its CPUs, waits
  // across processes yield early (two virtual nodes of 2 processes on 2
  // cores spun as if each process had a core).
  const std::vector<int> host_of = per_node > 0 ? discover_nodes(*channel, 0) : node_of;
  inter.host_members_before = 0;
  for (int p = 0; p < channel->size(); ++p) {
    if (host_of[p] != host_of[channel->rank()]) continue;
    inter.host_members += counts[p];
    if (p < channel->rank()) inter.host_members_before += counts[p];
  }
  channel->set_crowded(inter.host_members > static_cast<int>(std::thread::hardware_concurrency()));
  detail::ProcessLayout layout{channel->rank(), counts, std::move(node_of)};
  inter.cost = {mpi.alpha_seconds, mpi.beta_seconds_per_byte};
  inter.by_node = mpi.by_node;
  inter.pipeline_min_bytes = mpi.pipeline_min_bytes;
  inter.pipeline_chunk_bytes = mpi.pipeline_chunk_bytes;
  inter.node_shared_memory = mpi.shared_memory;
  inter.node_chunk_bytes = mpi.node_chunk_bytes;
  inter.node_run_ahead = options.run_ahead;
  inter.timeout = effective_timeout(options, mpi);
  options.timeout = inter.timeout;
  channel->set_timeout(inter.timeout);
  detail::Channel& endpoint = *channel;
  auto group = std::make_unique<detail::InterProcessGroup>(endpoint, std::move(layout), inter,
                                                           std::move(channel));
  options.members = threads;
  Team team = detail::team_over_processes(std::move(options), std::move(group));
  settle_nonblocking(team, least_level);
  return team;
}

}  // namespace hreduce
