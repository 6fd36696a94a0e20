// `hreduce bench --mpi`: one call on each side — hreduce on the team over
// MPI processes, MPI's own collective on the same ranks (double sum) — the
// buffers they work on, and the checks of their results.
//
// MPI's side is what a program without hreduce would run: one call per
// process on one buffer, the element-wise sum of the process's members'
// inputs (with one member per process, that member's input).
#pragma once

#include <cstddef>
#include <deque>
#include <span>
#include <vector>

#include "hreduce/team.hpp"
#include "src/compare/problem.hpp"

namespace hreduce::cli {

// With --zero-copy: every member's input and output of the largest size,
// from Team::allocate (once: that memory lives as long as the team).
struct SharedPool {
  SharedPool(Team& team, std::size_t n)
      : n(n), in(team.allocate<double>(n * team.local_size())),
        out(team.allocate<double>(n * team.local_size())) {}
  std::size_t n;
  std::span<double> in, out;
};

// This process's members' buffers, by local index (team rank - first):
// private vectors, or views of the shared pool; inputs filled with values
// whose sums are exact in any order, so the oracle is exact for every
// algorithm.
struct Buffers {
  Buffers(Team& team, std::size_t n, const SharedPool* pool);
  int first;
  std::vector<std::span<double>> in, out;
  std::deque<std::vector<double>> owned;  // a deque: views stay valid as it grows
};

// One member's call; n is the element count per member (the block size m
// for reduce_scatter_block, whose input is m·p). No `options`: the team's.
void call(Member& m, detail::compare::Collective kind, Buffers& b, std::size_t n,
          detail::OptionsRef options);

// This process's part of MPI's collective over MPI_COMM_WORLD.
class MpiCall {
 public:
  MpiCall(detail::compare::Collective kind, const Buffers& b, std::size_t n);
  void operator()();
  const std::vector<double>& out() const { return out_; }

 private:
  detail::compare::Collective kind_;
  int processes_ = 0;
  std::vector<double> in_, out_;
};

// Input and output bytes of one call over the whole team.
double moved_bytes(detail::compare::Collective kind, int p, std::size_t n);

// Whether hreduce's result (with `options`) matches the sequential oracle
// on this process's members; leaves it in b.out.
bool verify(Team& team, detail::compare::Collective kind, Buffers& b, std::size_t n,
            detail::OptionsRef options = {});
// Run after verify(), while b.out holds hreduce's result: whether MPI's
// allreduce gives the same bits (only where it compares like for like).
bool mpi_agrees(Team& team, detail::compare::Collective kind, MpiCall& mpi, const Buffers& b);

// `ok` on every process of MPI_COMM_WORLD.
bool everywhere(bool ok);
// Every process must take the same decisions, so with MPI a sample's time
// is the slowest process's.
double slowest(double seconds);

}  // namespace hreduce::cli
