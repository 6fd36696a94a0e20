// `hreduce bench --mpi`: hreduce on a team spanning MPI processes against
// MPI's own collectives on the same ranks (double sum), each hreduce result
// verified against a sequential oracle.
//
// MPI's side is what a program without hreduce would run: one call per
// process on one buffer, the element-wise sum of the process's members'
// inputs (with one member per process, that member's input).
//
// Timing: each sample is barrier, `batch` back-to-back calls, barrier, on
// the clock of each process's first member (MPI: of the process); the
// per-call time is the sample's time over `batch`, and every process takes
// the slowest process's time so that all take the same decisions. hreduce
// and MPI take turns sample by sample with the same batch, so drift hits
// both alike; the medians are reported.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "hreduce/error.hpp"
#include "hreduce/team.hpp"
#include "src/cli/bench.hpp"
#include "src/compare/problem.hpp"
#include "src/compare/record.hpp"
#include "src/compare/sampling.hpp"
#include "src/compare/text_output.hpp"

namespace hreduce::cli {
namespace {

namespace cmp = detail::compare;
using cmp::Collective;
using cmp::name_of;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Exact in any order, so the oracle is exact for every algorithm.
double value(int member, std::size_t i) { return cmp::Element<double>::value(member, i); }

// With --zero-copy: every member's input and output of the largest size,
// from Team::allocate (once: that memory lives as long as the team).
struct SharedPool {
  SharedPool(Team& team, std::size_t n)
      : n(n),
        in(team.allocate<double>(n * team.local_size())),
        out(team.allocate<double>(n * team.local_size())) {}
  std::size_t n;
  std::span<double> in, out;
};

// This process's members' buffers, by local index (team rank - first):
// private vectors, or views of the shared pool.
struct Buffers {
  Buffers(Team& team, std::size_t n, const SharedPool* pool) : first(team.member(0).rank()) {
    for (int i = 0; i < team.local_size(); ++i) {
      if (pool != nullptr) {
        in.push_back(pool->in.subspan(i * pool->n, n));
        out.push_back(pool->out.subspan(i * pool->n, n));
      } else {
        in.push_back(owned.emplace_back(n));
        out.push_back(owned.emplace_back(n));
      }
      for (std::size_t k = 0; k < n; ++k) in.back()[k] = value(first + i, k);
    }
  }
  int first;
  std::vector<std::span<double>> in, out;
  std::deque<std::vector<double>> owned;  // a deque: views stay valid as it grows
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
    case Collective::reduce_scatter: break;  // not compared (kCollectives)
  }
}

// This process's part of MPI's collective over MPI_COMM_WORLD.
class MpiCall {
 public:
  MpiCall(Collective kind, const Buffers& b, std::size_t n) : kind_(kind), in_(n), out_(n) {
    for (const auto& member : b.in) {
      std::transform(in_.begin(), in_.end(), member.begin(), in_.begin(), std::plus<>());
    }
    MPI_Comm_size(MPI_COMM_WORLD, &processes_);
  }

  void operator()() {
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

  const std::vector<double>& out() const { return out_; }

 private:
  Collective kind_;
  int processes_ = 0;
  std::vector<double> in_, out_;
};

// Input and output bytes of one call over the whole team.
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

bool verify(Team& team, Collective kind, Buffers& b, std::size_t n) {
  const int p = team.size();
  for (auto& o : b.out) std::fill(o.begin(), o.end(), -1e300);
  team.run([&](Member& m) { call(m, kind, b, n); });
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

// Run after verify(), while b.out holds hreduce's result. With several
// members a process's input is a sum of theirs; one member per process
// compares like for like. The test is the same on every process, which must
// all call MPI or none.
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

// Every process must take the same decisions below, so with MPI the
// sample's time is the slowest process's.
double slowest(double seconds) {
  double max = 0;
  MPI_Allreduce(&seconds, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

double hreduce_seconds(Team& team, Collective kind, Buffers& b, std::size_t n, int batch) {
  double seconds = 0;
  team.run([&](Member& m) {
    m.barrier();
    const auto start = Clock::now();
    for (int i = 0; i < batch; ++i) call(m, kind, b, n);
    m.barrier();
    if (m.rank() == b.first) seconds = seconds_since(start);
  });
  return slowest(seconds);
}

double mpi_seconds(MpiCall& mpi, int batch) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = Clock::now();
  for (int i = 0; i < batch; ++i) mpi();
  MPI_Barrier(MPI_COMM_WORLD);
  return slowest(seconds_since(start));
}

struct Medians {
  cmp::Summary hreduce, mpi;
};

// Each function runs a batch of calls and returns the slowest process's
// seconds, so every process leaves the loop at the same sample.
Medians sample_in_turn(const std::function<double(int)>& hreduce,
                       const std::function<double(int)>& mpi, double min_seconds) {
  int batch = 1;
  std::vector<double> ours, theirs;
  const auto start = Clock::now();
  auto more = [&] {
    return ours.size() < 5 || (slowest(seconds_since(start)) < min_seconds && ours.size() < 200);
  };
  while (more()) {
    const double h = hreduce(batch), m = mpi(batch);
    // Grow the batch until the faster side's sample is long enough to time well.
    if (std::min(h, m) < 1e-3 && batch < (1 << 20)) {
      batch *= 2;
      continue;
    }
    ours.push_back(h / batch);
    theirs.push_back(m / batch);
  }
  return {cmp::summarize(std::move(ours)), cmp::summarize(std::move(theirs))};
}

cmp::Record record(Collective kind, const char* implementation, const cmp::Summary& s, int p,
                   std::size_t n) {
  cmp::Record r;
  r.collective = name_of(kind);
  r.implementation = implementation;
  r.type = cmp::Element<double>::type;
  r.op = cmp::Element<double>::op;
  r.members = p;
  r.bytes_per_member = n * sizeof(double);
  cmp::set_timing(r, s, moved_bytes(kind, p, n));
  return r;
}

// One collective and size, measured on both sides.
struct Row {
  cmp::Record hreduce, mpi;
  std::string path;   // hreduce's shared-memory path inside each process
  std::string check;  // "ok", or what differed
};

Row measure(Team& team, Collective kind, std::size_t bytes, double min_seconds,
            const SharedPool* pool) {
  const int p = team.size();
  const std::size_t n = cmp::element_count<double>(kind, p, bytes);
  Buffers b(team, n, pool);
  MpiCall mpi(kind, b, n);
  const bool right = everywhere(verify(team, kind, b, n));
  const bool agrees = everywhere(mpi_agrees(team, kind, mpi, b));
  const Medians medians = sample_in_turn(
      [&](int batch) { return hreduce_seconds(team, kind, b, n, batch); },
      [&](int batch) { return mpi_seconds(mpi, batch); }, min_seconds);
  return {record(kind, "hreduce", medians.hreduce, p, n), record(kind, "mpi", medians.mpi, p, n),
          std::string(team.local_path(kind, n * sizeof(double))),
          !right    ? "WRONG (hreduce differs from the oracle)"
          : !agrees ? "WRONG (MPI_Allreduce differs from hreduce)"
                    : "ok"};
}

void print_header() {
  std::printf("%-22s %14s %12s %12s %12s %10s %10s  %s\n", "collective", "bytes/member",
              "hreduce us", "mpi us", "mpi/hreduce", "GB/s", "path", "check");
}

void print_row(const Row& row) {
  const cmp::Record& ours = row.hreduce;
  std::printf("%-22s %14s %12.2f %12.2f %12.2f %10.2f %10s  %s\n", ours.collective.c_str(),
              cmp::human_bytes(ours.bytes_per_member).c_str(), ours.median_seconds * 1e6,
              row.mpi.median_seconds * 1e6, row.mpi.median_seconds / ours.median_seconds,
              ours.gbps, row.path.c_str(), row.check.c_str());
  std::fflush(stdout);
}

// Only rank 0 writes files, but when it cannot, every process must stop
// together rather than wait for it in the next collective. Rank 0 rethrows
// the error, whose message names the file; the others return false.
bool written_by_rank_0(bool speaker, const std::function<void()>& write) {
  std::exception_ptr failure;
  if (speaker) {
    try {
      write();
    } catch (const Error&) {
      failure = std::current_exception();
    }
  }
  const bool ok = everywhere(!failure);
  if (failure) std::rethrow_exception(failure);
  return ok;
}

bool write_reports(bool speaker, const Args& args, const std::vector<cmp::Record>& records,
                   const std::string& title) {
  return written_by_rank_0(speaker, [&] {
    if (auto path = args.get("--json")) cmp::write_json(*path, records);
    if (auto path = args.get("--plot")) cmp::write_svg(*path, records, title);
  });
}

}  // namespace

int run_mpi_bench(Team& team, const Args& args, const std::vector<std::size_t>& sizes,
                  double min_seconds) {
  const std::vector<Collective> collectives = chosen_collectives(args);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const bool speaker = rank == 0;
  const std::string title = "hreduce bench --mpi: " + std::to_string(team.size()) +
                            " members in " + std::to_string(team.processes()) +
                            " processes on " + team.topology().source() +
                            (args.has("--zero-copy") ? ", buffers from Team::allocate" : "");
  // Unwritable output paths fail now, not after minutes of measuring.
  if (!write_reports(speaker, args, {}, title)) return 1;
  if (speaker) {
    for (Collective kind : collectives) {
      std::printf("  %s\n", team.explain(kind, sizes.back()).c_str());
    }
    std::printf("  hreduce's buffers: %s\n",
                args.has("--zero-copy")
                    ? "from Team::allocate (the node's processes read and write them in place)"
                    : "private (copied through the node's staging chunks)");
    std::printf("mpi/hreduce: MPI's time / hreduce's time (> 1: hreduce faster)\n");
    print_header();
  }
  std::vector<cmp::Record> records;
  bool all_ok = true;
  std::optional<SharedPool> pool;
  if (args.has("--zero-copy")) {
    std::size_t most = 0;
    for (Collective kind : collectives) {
      for (std::size_t bytes : sizes) {
        most = std::max(most, cmp::element_count<double>(kind, team.size(), bytes));
      }
    }
    pool.emplace(team, most);
  }
  for (Collective kind : collectives) {
    for (std::size_t bytes : sizes) {
      const Row row = measure(team, kind, bytes, min_seconds, pool ? &*pool : nullptr);
      if (speaker) print_row(row);
      all_ok &= row.check == "ok";
      records.insert(records.end(), {row.hreduce, row.mpi});
    }
  }
  if (!write_reports(speaker, args, records, title)) return 1;
  if (!all_ok) {
    if (speaker) std::fprintf(stderr, "hreduce bench: some results differ (see column check)\n");
    return 1;
  }
  return 0;
}

}  // namespace hreduce::cli
