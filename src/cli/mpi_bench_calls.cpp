#include "src/cli/mpi_bench_calls.hpp"

#include <algorithm>
#include <functional>

#include <mpi.h>

namespace hreduce::cli {

namespace cmp = detail::compare;
using cmp::Collective;

Buffers::Buffers(Team& team, std::size_t n, const SharedPool* pool) : first(team.member(0).rank()) {
  for (int i = 0; i < team.local_size(); ++i) {
    if (pool != nullptr) {
      in.push_back(pool->in.subspan(i * pool->n, n));
      out.push_back(pool->out.subspan(i * pool->n, n));
    } else {
      in.push_back(owned.emplace_back(n));
      out.push_back(owned.emplace_back(n));
    }
    for (std::size_t k = 0; k < n; ++k) in.back()[k] = cmp::Element<double>::value(first + i, k);
  }
}

void call(Member& m, Collective kind, Buffers& b, std::size_t n, detail::OptionsRef options) {
  const double* in = b.in[m.rank() - b.first].data();
  double* out = b.out[m.rank() - b.first].data();
  switch (kind) {
    case Collective::reduce: m.reduce(in, out, n, op::sum, 0, options); break;
    case Collective::allreduce: m.allreduce(in, out, n, op::sum, options); break;
    case Collective::reduce_scatter_block:
      m.reduce_scatter_block(in, out, n / m.size(), op::sum, options);
      break;
    case Collective::scan: m.scan(in, out, n, op::sum, options); break;
    case Collective::exscan: m.exscan(in, out, n, op::sum, options); break;
    case Collective::reduce_scatter: break;  // not compared (kCollectives)
  }
}

MpiCall::MpiCall(Collective kind, const Buffers& b, std::size_t n) : kind_(kind), in_(n), out_(n) {
  for (const auto& member : b.in) {
    std::transform(in_.begin(), in_.end(), member.begin(), in_.begin(), std::plus<>());
  }
  MPI_Comm_size(MPI_COMM_WORLD, &processes_);
}

void MpiCall::operator()() {
  const int n = static_cast<int>(in_.size());
  switch (kind_) {
    case Collective::reduce:
      MPI_Reduce(in_.data(), out_.data(), n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      break;
    case Collective::allreduce:
      MPI_Allreduce(in_.data(), out_.data(), n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      break;
    case Collective::reduce_scatter_block:
      // n is a multiple of the members, not always of the processes (when
      // they contribute different thread counts): MPI then leaves the tail.
      MPI_Reduce_scatter_block(in_.data(), out_.data(), n / processes_, MPI_DOUBLE, MPI_SUM,
                               MPI_COMM_WORLD);
      break;
    case Collective::scan:
      MPI_Scan(in_.data(), out_.data(), n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      break;
    case Collective::exscan:
      MPI_Exscan(in_.data(), out_.data(), n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      break;
    case Collective::reduce_scatter: break;  // not compared (kCollectives)
  }
}

double moved_bytes(Collective kind, int p, std::size_t n) {
  const double in = static_cast<double>(p) * n * sizeof(double);
  switch (kind) {
    case Collective::reduce: return in + n * sizeof(double);
    case Collective::allreduce:
    case Collective::scan: return 2 * in;
    case Collective::reduce_scatter_block: return in + in / p;
    case Collective::exscan: return in + static_cast<double>(p - 1) * n * sizeof(double);
    case Collective::reduce_scatter: break;  // not compared (kCollectives)
  }
  return in;
}

bool verify(Team& team, Collective kind, Buffers& b, std::size_t n, detail::OptionsRef options) {
  const int p = team.size();
  for (auto& o : b.out) std::fill(o.begin(), o.end(), -1e300);
  team.run([&](Member& m) { call(m, kind, b, n, options); });
  const std::size_t block = n / p;
  for (int r = b.first; r < b.first + team.local_size(); ++r) {
    if (!cmp::has_output(kind, r)) continue;
    const std::size_t len = kind == Collective::reduce_scatter_block ? block : n;
    for (std::size_t i = 0; i < len; ++i) {
      if (b.out[r - b.first][i] != cmp::expected_output<double>(kind, p, r, i, block)) {
        return false;
      }
    }
  }
  return true;
}

// With several members a process's input is a sum of theirs; one member
// per process compares like for like. The test is the same on every
// process, which must all call MPI or none.
bool mpi_agrees(Team& team, Collective kind, MpiCall& mpi, const Buffers& b) {
  if (kind != Collective::allreduce || team.size() != team.processes()) return true;
  mpi();
  return std::equal(mpi.out().begin(), mpi.out().end(), b.out.front().begin());
}

bool everywhere(bool ok) {
  int mine = ok, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all != 0;
}

double slowest(double seconds) {
  double max = 0;
  MPI_Allreduce(&seconds, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

}  // namespace hreduce::cli
