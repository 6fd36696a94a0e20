// MPI ping-pong between pairs of ranks, one pair at a time while the others
// wait in a barrier: 8-byte messages for latency (half the round trip), and
// large ones for bandwidth (the message over half the round trip).
#include "src/probe/mpi_point_to_point.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "src/common/environment.hpp"
#include "src/probe/measurements.hpp"

namespace hreduce::detail::probe {
namespace {

constexpr int kAllPairsUpTo = 16;
constexpr int kTag = 3517;

// Seconds per round trip of `bytes`, seen from `me` (a starts, b answers).
double ping_pong(MPI_Comm comm, int me, int a, int b, std::vector<char>& buffer, int bytes,
                 int trips) {
  const int peer = me == a ? b : a;
  auto trip = [&] {
    if (me == a) {
      MPI_Send(buffer.data(), bytes, MPI_BYTE, peer, kTag, comm);
      MPI_Recv(buffer.data(), bytes, MPI_BYTE, peer, kTag, comm, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buffer.data(), bytes, MPI_BYTE, peer, kTag, comm, MPI_STATUS_IGNORE);
      MPI_Send(buffer.data(), bytes, MPI_BYTE, peer, kTag, comm);
    }
  };
  for (int i = 0; i < std::max(2, trips / 10); ++i) trip();
  std::vector<double> blocks;
  for (int block = 0; block < 5; ++block) {
    const double start = MPI_Wtime();
    for (int i = 0; i < trips; ++i) trip();
    blocks.push_back((MPI_Wtime() - start) / trips);
  }
  return median(blocks);
}

std::vector<int> node_of_ranks(MPI_Comm comm, int size, int k) {
  std::vector<int> node_of(static_cast<std::size_t>(size));
  if (k > 0) {
    for (int p = 0; p < size; ++p) node_of[static_cast<std::size_t>(p)] = p / k;
    return node_of;
  }
  // Real nodes: each rank learns the lowest world rank of its node; nodes
  // are numbered in order of those.
  MPI_Comm node_comm;
  int rank = 0, lowest = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_comm);
  MPI_Allreduce(&rank, &lowest, 1, MPI_INT, MPI_MIN, node_comm);
  MPI_Comm_free(&node_comm);
  std::vector<int> lowest_of(static_cast<std::size_t>(size));
  MPI_Allgather(&lowest, 1, MPI_INT, lowest_of.data(), 1, MPI_INT, comm);
  std::vector<int> leaders = lowest_of;
  std::sort(leaders.begin(), leaders.end());
  leaders.erase(std::unique(leaders.begin(), leaders.end()), leaders.end());
  for (int p = 0; p < size; ++p) {
    node_of[static_cast<std::size_t>(p)] = static_cast<int>(
        std::lower_bound(leaders.begin(), leaders.end(), lowest_of[static_cast<std::size_t>(p)]) -
        leaders.begin());
  }
  return node_of;
}

std::optional<MpiLink> summarise(const std::vector<MpiPair>& pairs, bool same_node) {
  std::vector<double> latency, bandwidth;
  for (const MpiPair& p : pairs) {
    if (p.same_node != same_node) continue;
    latency.push_back(p.latency_seconds);
    bandwidth.push_back(p.bytes_per_second);
  }
  if (latency.empty()) return std::nullopt;
  return MpiLink{static_cast<int>(latency.size()), median(latency), median(bandwidth)};
}

}  // namespace

MpiPointToPoint mpi_point_to_point(MPI_Comm comm, bool quick,
                                   const std::function<void(const std::string&)>& progress) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int k = static_cast<int>(
      count_from_environment("hreduce probe", "HREDUCE_PROCS_PER_NODE", "processes", 0));
  MpiPointToPoint out;
  out.processes = size;
  out.virtual_nodes = k > 0;
  out.large_message_bytes = quick ? 256 * 1024 : 1 << 20;
  out.node_of_rank = node_of_ranks(comm, size, k);
  out.nodes = *std::max_element(out.node_of_rank.begin(), out.node_of_rank.end()) + 1;
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < size; ++a) {
    for (int b = a + 1; b < size; ++b) {
      if (size <= kAllPairsUpTo || a == 0) pairs.emplace_back(a, b);
    }
  }
  std::vector<char> buffer(out.large_message_bytes, 1);
  const int large = static_cast<int>(out.large_message_bytes);
  for (const auto& [a, b] : pairs) {
    if (rank == 0) progress("MPI ranks " + std::to_string(a) + " <-> " + std::to_string(b));
    double figures[2] = {0, 0};
    if (rank == a || rank == b) {
      figures[0] = ping_pong(comm, rank, a, b, buffer, 8, quick ? 100 : 1000) / 2;
      figures[1] = large / (ping_pong(comm, rank, a, b, buffer, large, quick ? 4 : 20) / 2);
    }
    if (a != 0 && rank == a) MPI_Send(figures, 2, MPI_DOUBLE, 0, kTag, comm);
    if (a != 0 && rank == 0) MPI_Recv(figures, 2, MPI_DOUBLE, a, kTag, comm, MPI_STATUS_IGNORE);
    const bool same = out.node_of_rank[static_cast<std::size_t>(a)] ==
                      out.node_of_rank[static_cast<std::size_t>(b)];
    out.pairs.push_back({a, b, same, figures[0], figures[1]});
    MPI_Barrier(comm);
  }
  out.intra_node = summarise(out.pairs, true);
  out.inter_node = summarise(out.pairs, false);
  return out;
}

}  // namespace hreduce::detail::probe
