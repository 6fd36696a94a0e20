// MPI ping-pong between pairs of ranks, one pair at a time while the others
// wait in a barrier: 8-byte messages for latency (half the round trip), and
// large ones for bandwidth (the message over half the round trip).
#include "src/probe/mpi_point_to_point.hpp"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "src/common/environment.hpp"
#include "src/probe/measurements.hpp"
#include "src/transport/mpi_channel.hpp"

namespace hreduce::detail::probe {
namespace {

constexpr int kAllPairsUpTo = 16;
constexpr int kTag = 3517;

// Seconds per call of `trip` (a round trip): a tenth of `trips` to warm up,
// then the median of five blocks of `trips`.
template <class Trip>
double seconds_per_trip(Trip&& trip, int trips) {
  for (int i = 0; i < std::max(2, trips / 10); ++i) trip();
  std::vector<double> blocks;
  for (int block = 0; block < 5; ++block) {
    const double start = MPI_Wtime();
    for (int i = 0; i < trips; ++i) trip();
    blocks.push_back((MPI_Wtime() - start) / trips);
  }
  return median(blocks);
}

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
  return seconds_per_trip(trip, trips);
}

// Messages from 8 B to 16 MiB by eights: the small ones show the protocol
// steps of the MPI library (an eager message, a rendezvous), the large ones
// the copies through memory that a bandwidth from one size hides.
constexpr int kCurveBytes[] = {8, 64, 512, 4 << 10, 32 << 10, 256 << 10, 2 << 20, 16 << 20};
static_assert(kCurveBytes[0] == 8, "exchange_seconds is the exchange of 8 bytes");

// Seconds per round trip of `bytes` through the runtime's own channel
// (nonblocking posts, then polling that yields the core after a while): what
// hreduce's messages pay, which a bare MPI_Send/MPI_Recv does not show.
double channel_round_trip(MpiChannel& channel, int me, int a, int b, std::vector<char>& buffer,
                          int bytes, int trips) {
  const int peer = me == a ? b : a;
  const auto size = static_cast<std::size_t>(bytes);
  auto trip = [&] {
    if (me == a) {
      channel.send(peer, buffer.data(), size, kTag);
      channel.recv(peer, buffer.data(), size, kTag);
    } else {
      channel.recv(peer, buffer.data(), size, kTag);
      channel.send(peer, buffer.data(), size, kTag);
    }
  };
  return seconds_per_trip(trip, trips);
}

// Seconds per exchange of `bytes` through the runtime's channel, both
// ranks sending and receiving at once: the step of recursive doubling, a
// hypercube or a ring, which costs more than half a round trip (each rank
// handles both messages, and on one machine both copies share its memory).
// Each rank sends what it received the time before, as those algorithms
// send what they just folded (and as a ping-pong does): on one machine the
// payload's lines come from the other core's caches, not from a buffer
// both cores hold unchanged.
double channel_exchange(MpiChannel& channel, int me, int a, int b, std::vector<char>& one,
                        std::vector<char>& other, int bytes, int trips) {
  const int peer = me == a ? b : a;
  const auto size = static_cast<std::size_t>(bytes);
  char* out = one.data();
  char* in = other.data();
  auto exchange = [&] {
    channel.sendrecv(peer, out, size, peer, in, size, kTag);
    std::swap(out, in);
  };
  return seconds_per_trip(exchange, trips);
}

// Trips per size, fewer for larger messages so that each size takes about
// the same time.
int trips_for(int bytes, bool quick) {
  return std::clamp((quick ? 1 : 4) * (1 << 20) / bytes, 2, quick ? 100 : 400);
}

// One way per size, seen from `me`.
std::vector<MessageTime> message_curve(MpiChannel& channel, int me, int a, int b, bool quick) {
  std::vector<char> buffer(static_cast<std::size_t>(kCurveBytes[std::size(kCurveBytes) - 1]), 1);
  std::vector<MessageTime> curve;
  for (int bytes : kCurveBytes) {
    curve.push_back(
        {static_cast<std::uint64_t>(bytes),
         channel_round_trip(channel, me, a, b, buffer, bytes, trips_for(bytes, quick)) / 2});
  }
  return curve;
}

// An exchange per size, seen from `me`.
std::vector<DataTransfer> exchange_curve(MpiChannel& channel, int me, int a, int b, bool quick) {
  const auto largest = static_cast<std::size_t>(kCurveBytes[std::size(kCurveBytes) - 1]);
  std::vector<char> out(largest, 1), in(largest, 0);
  std::vector<DataTransfer> curve;
  for (int bytes : kCurveBytes) {
    curve.push_back({static_cast<std::uint64_t>(bytes),
                     channel_exchange(channel, me, a, b, out, in, bytes, trips_for(bytes, quick))});
  }
  return curve;
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
  std::vector<double> latency, bandwidth, exchange;
  for (const MpiPair& p : pairs) {
    if (p.same_node != same_node) continue;
    latency.push_back(p.latency_seconds);
    bandwidth.push_back(p.bytes_per_second);
    exchange.push_back(p.exchange_seconds);
  }
  if (latency.empty()) return std::nullopt;
  MpiLink link{static_cast<int>(latency.size()),
               median(latency),
               median(bandwidth),
               {},
               median(exchange),
               {}};
  for (std::size_t i = 0; i < std::size(kCurveBytes); ++i) {
    std::vector<double> times;
    for (const MpiPair& p : pairs) {
      if (p.same_node == same_node && i < p.by_size.size()) {
        times.push_back(p.by_size[i].one_way_seconds);
      }
    }
    if (!times.empty()) {
      link.by_size.push_back({static_cast<std::uint64_t>(kCurveBytes[i]), median(times)});
    }
    std::vector<double> exchanges;
    for (const MpiPair& p : pairs) {
      if (p.same_node == same_node && i < p.exchange_by_size.size()) {
        exchanges.push_back(p.exchange_by_size[i].seconds);
      }
    }
    if (!exchanges.empty()) {
      link.exchange_by_size.push_back(
          {static_cast<std::uint64_t>(kCurveBytes[i]), median(exchanges)});
    }
  }
  return link;
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
  MpiChannel channel(comm);
  std::vector<char> buffer(out.large_message_bytes, 1);
  const int large = static_cast<int>(out.large_message_bytes);
  for (const auto& [a, b] : pairs) {
    if (rank == 0) progress("MPI ranks " + std::to_string(a) + " <-> " + std::to_string(b));
    constexpr int kCurve = static_cast<int>(std::size(kCurveBytes));
    constexpr int kFigures = 2 + 2 * kCurve;  // latency, bandwidth, one way and exchange by size
    double figures[kFigures] = {};
    if (rank == a || rank == b) {
      figures[0] = ping_pong(comm, rank, a, b, buffer, 8, quick ? 100 : 1000) / 2;
      figures[1] = large / (ping_pong(comm, rank, a, b, buffer, large, quick ? 4 : 20) / 2);
      const std::vector<MessageTime> one_way = message_curve(channel, rank, a, b, quick);
      const std::vector<DataTransfer> exchange = exchange_curve(channel, rank, a, b, quick);
      for (int i = 0; i < kCurve; ++i) {
        figures[2 + i] = one_way[i].one_way_seconds;
        figures[2 + kCurve + i] = exchange[i].seconds;
      }
    }
    if (a != 0 && rank == a) MPI_Send(figures, kFigures, MPI_DOUBLE, 0, kTag, comm);
    if (a != 0 && rank == 0)
      MPI_Recv(figures, kFigures, MPI_DOUBLE, a, kTag, comm, MPI_STATUS_IGNORE);
    const bool same = out.node_of_rank[static_cast<std::size_t>(a)] ==
                      out.node_of_rank[static_cast<std::size_t>(b)];
    std::vector<MessageTime> by_size;
    std::vector<DataTransfer> exchange_by_size;
    for (int i = 0; i < kCurve; ++i) {
      const auto bytes = static_cast<std::uint64_t>(kCurveBytes[i]);
      by_size.push_back({bytes, figures[2 + i]});
      exchange_by_size.push_back({bytes, figures[2 + kCurve + i]});
    }
    // kCurveBytes starts at 8: the exchange of 8 bytes is the curve's first.
    out.pairs.push_back({a, b, same, figures[0], figures[1], std::move(by_size),
                         figures[2 + kCurve], std::move(exchange_by_size)});
    MPI_Barrier(comm);
  }
  out.intra_node = summarise(out.pairs, true);
  out.inter_node = summarise(out.pairs, false);
  return out;
}

}  // namespace hreduce::detail::probe
