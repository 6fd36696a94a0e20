// `hreduce bench --mpi`: hreduce alone on a team spanning MPI processes
// (double sum), each size verified against a sequential oracle.
//
// Timing: each repetition is barrier, `batch` back-to-back calls, barrier, on
// the clock of member 0; the per-call time is the repetition's time over
// `batch`, and every process takes the slowest process's time so that all
// take the same decisions. The median over repetitions is reported.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <mpi.h>

#include "hreduce/team.hpp"
#include "src/cli/bench.hpp"
#include "src/compare/text_output.hpp"
#include "src/compare/problem.hpp"

namespace hreduce::cli {
namespace {

using detail::compare::Collective;
using detail::compare::name_of;

// Exact in any order, so the oracle is exact for every algorithm.
double value(int member, std::size_t i) {
  return detail::compare::Element<double>::value(member, i);
}

// This process's members' buffers, by local index (team rank - first).
struct Buffers {
  int first = 0;
  std::vector<std::vector<double>> in, out;
};

// One member's call; n is the element count per member (the block size m
// for reduce_scatter_block, whose input is m·p).
void call(Member& m, Collective kind, Buffers& b, std::size_t n) {
  const double* in = b.in[m.rank() - b.first].data();
  double* out = b.out[m.rank() - b.first].data();
  switch (kind) {
    case Collective::reduce: m.reduce(in, out, n, op::sum, 0); break;
    case Collective::allreduce: m.allreduce(in, out, n, op::sum); break;
    case Collective::reduce_scatter_block:
      m.reduce_scatter_block(in, out, n / m.size(), op::sum);
      break;
    case Collective::scan: m.scan(in, out, n, op::sum); break;
    case Collective::exscan: m.exscan(in, out, n, op::sum); break;
  }
}

// Input and output bytes of one call over the whole team.
double moved_bytes(Collective kind, int p, std::size_t n) {
  const double in = static_cast<double>(p) * n * sizeof(double);
  switch (kind) {
    case Collective::reduce: return in + n * sizeof(double);
    case Collective::allreduce:
    case Collective::scan: return 2 * in;
    case Collective::reduce_scatter_block: return in + in / p;
    case Collective::exscan: return in + static_cast<double>(p - 1) * n * sizeof(double);
  }
  return in;
}

bool verify(Team& team, Collective kind, Buffers& b, std::size_t n) {
  const int p = team.size();
  for (auto& o : b.out) std::fill(o.begin(), o.end(), -1e300);
  team.run([&](Member& m) { call(m, kind, b, n); });
  const std::size_t block = n / p;
  for (int r = b.first; r < b.first + team.local_size(); ++r) {
    if (!detail::compare::has_output(kind, r)) continue;
    const std::size_t len = kind == Collective::reduce_scatter_block ? block : n;
    for (std::size_t i = 0; i < len; ++i) {
      if (b.out[r - b.first][i] != detail::compare::expected_output<double>(kind, p, r, i, block)) {
        return false;
      }
    }
  }
  return true;
}

// Every process must take the same decisions below, so with MPI the
// repetition's time is the slowest process's.
double slowest(double seconds) {
  double max = 0;
  MPI_Allreduce(&seconds, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

double median_seconds_per_call(Team& team, Collective kind, Buffers& b, std::size_t n,
                                double min_seconds) {
  using clock = std::chrono::steady_clock;
  int batch = 1;
  std::vector<double> samples;
  const auto start = clock::now();
  auto elapsed = [&] {
    return slowest(std::chrono::duration<double>(clock::now() - start).count());
  };
  while (samples.size() < 5 || (elapsed() < min_seconds && samples.size() < 200)) {
    double seconds = 0;
    team.run([&](Member& m) {
      m.barrier();
      const auto t0 = clock::now();
      for (int i = 0; i < batch; ++i) call(m, kind, b, n);
      m.barrier();
      if (m.rank() == b.first) seconds = std::chrono::duration<double>(clock::now() - t0).count();
    });
    seconds = slowest(seconds);
    // Grow the batch until one repetition is long enough to time well.
    if (seconds < 1e-3 && batch < (1 << 20)) {
      batch *= 2;
      continue;
    }
    samples.push_back(seconds / batch);
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

int run_mpi_bench(Team& team, const std::vector<std::size_t>& sizes, double min_seconds) {
  const int p = team.size();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const bool speaker = rank == 0;
  auto say = [&](const char* format, auto... values) {
    if (speaker) std::printf(format, values...);
  };
  auto everywhere = [](bool ok) {
    int mine = ok, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all != 0;
  };
  for (Collective kind : detail::compare::kCollectives) {
    say("  %s\n", team.explain(std::string(name_of(kind)), sizes.back()).c_str());
  }
  say("%-22s %14s %12s %10s %10s %8s\n", "collective", "bytes/member", "median us", "GB/s",
      "algorithm", "check");
  bool all_ok = true;
  for (Collective kind : detail::compare::kCollectives) {
    for (std::size_t bytes : sizes) {
      const std::size_t n = detail::compare::element_count<double>(kind, p, bytes);
      Buffers b;
      b.first = team.member(0).rank();
      for (int r = b.first; r < b.first + team.local_size(); ++r) {
        b.in.emplace_back(n);
        for (std::size_t i = 0; i < n; ++i) b.in.back()[i] = value(r, i);
        b.out.emplace_back(n);
      }
      const bool ok = everywhere(verify(team, kind, b, n));
      all_ok &= ok;
      const double seconds = median_seconds_per_call(team, kind, b, n, min_seconds);
      const std::string path(team.local_path(name_of(kind), n * sizeof(double)));
      say("%-22s %14s %12.2f %10.2f %10s %8s\n", std::string(name_of(kind)).c_str(),
          detail::compare::human_bytes(n * sizeof(double)).c_str(), seconds * 1e6,
          moved_bytes(kind, p, n) / seconds / 1e9, path.c_str(), ok ? "ok" : "WRONG");
      std::fflush(stdout);
    }
  }
  if (!all_ok) {
    if (speaker) std::fprintf(stderr, "hreduce bench: some results differ from the sequential oracle\n");
    return 1;
  }
  return 0;
}

}  // namespace hreduce::cli
