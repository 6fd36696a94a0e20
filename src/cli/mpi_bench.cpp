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
//
// With --reproducibility, hreduce also runs at each named level (per-call
// options), verified and sampled in the same turns, and each row gives that
// time and its ratio to hreduce's run_to_run time.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "hreduce/error.hpp"
#include "hreduce/team.hpp"
#include "src/cli/bench.hpp"
#include "src/cli/mpi_preamble.hpp"
#include "src/cli/progress.hpp"
#include "src/compare/problem.hpp"
#include "src/compare/record.hpp"
#include "src/compare/runner.hpp"
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
      : n(n), in(team.allocate<double>(n * team.local_size())),
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
// for reduce_scatter_block, whose input is m·p). No `options`: the team's.
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

bool verify(Team& team, Collective kind, Buffers& b, std::size_t n,
            detail::OptionsRef options = {}) {
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

double hreduce_seconds(Team& team, Collective kind, Buffers& b, std::size_t n, int batch,
                       detail::OptionsRef options) {
  double seconds = 0;
  team.run([&](Member& m) {
    m.barrier();
    const auto start = Clock::now();
    for (int i = 0; i < batch; ++i) call(m, kind, b, n, options);
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

// Each side runs a batch of calls and returns the slowest process's
// seconds, so every process leaves the loop at the same sample. One summary
// per side, in order.
std::vector<cmp::Summary> sample_in_turn(const std::vector<std::function<double(int)>>& sides,
                                         double min_seconds) {
  int batch = 1;
  std::vector<std::vector<double>> per_call(sides.size());
  const auto start = Clock::now();
  auto more = [&] {
    const std::size_t taken = per_call.front().size();
    return taken < 5 || (slowest(seconds_since(start)) < min_seconds && taken < 200);
  };
  std::vector<double> seconds(sides.size());
  while (more()) {
    for (std::size_t i = 0; i < sides.size(); ++i) seconds[i] = sides[i](batch);
    // Grow the batch until the fastest side's sample is long enough to time well.
    if (*std::min_element(seconds.begin(), seconds.end()) < 1e-3 && batch < (1 << 20)) {
      batch *= 2;
      continue;
    }
    for (std::size_t i = 0; i < sides.size(); ++i) per_call[i].push_back(seconds[i] / batch);
  }
  std::vector<cmp::Summary> summaries;
  for (auto& samples : per_call) summaries.push_back(cmp::summarize(std::move(samples)));
  return summaries;
}

cmp::Record record(Collective kind, const std::string& implementation, const cmp::Summary& s, int p,
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
  std::vector<cmp::Record> levels;  // hreduce at each --reproducibility level, in order
  std::string path;                 // hreduce's shared-memory path inside each process
  std::string across;               // what it moves between processes (Team::across_processes)
  std::string check;                // "ok", or what differed
};

// The team's options but for the level: each level's calls differ from
// plain hreduce's in nothing else.
std::vector<CollectiveOptions> level_options(const Team& team,
                                             const std::vector<Reproducibility>& levels) {
  std::vector<CollectiveOptions> options;
  for (Reproducibility level : levels) {
    options.push_back(team.options().collectives);
    options.back().reproducibility = level;
  }
  return options;
}

// The first side whose result differs (hreduce's, then each level's), or ok.
std::string check_of(Team& team, Collective kind, MpiCall& mpi, Buffers& b, std::size_t n,
                     const std::vector<Reproducibility>& levels,
                     const std::vector<CollectiveOptions>& options) {
  if (!everywhere(verify(team, kind, b, n))) return "WRONG (hreduce differs from the oracle)";
  if (!everywhere(mpi_agrees(team, kind, mpi, b))) {
    return "WRONG (MPI_Allreduce differs from hreduce)";
  }
  for (std::size_t i = 0; i < levels.size(); ++i) {
    if (!everywhere(verify(team, kind, b, n, options[i]))) {
      return "WRONG (" + cmp::hreduce_at_level_name(levels[i]) + " differs from the oracle)";
    }
  }
  return "ok";
}

Row measure(Team& team, Collective kind, std::size_t bytes, double min_seconds,
            const SharedPool* pool, const std::vector<Reproducibility>& levels) {
  const int p = team.size();
  const std::size_t n = cmp::element_count<double>(kind, p, bytes);
  Buffers b(team, n, pool);
  MpiCall mpi(kind, b, n);
  const std::vector<CollectiveOptions> options = level_options(team, levels);
  const std::string check = check_of(team, kind, mpi, b, n, levels, options);
  std::vector<std::function<double(int)>> sides = {
      [&](int batch) { return hreduce_seconds(team, kind, b, n, batch, {}); },
      [&](int batch) { return mpi_seconds(mpi, batch); }};
  for (const CollectiveOptions& o : options) {
    sides.push_back([&](int batch) { return hreduce_seconds(team, kind, b, n, batch, o); });
  }
  const std::vector<cmp::Summary> summaries = sample_in_turn(sides, min_seconds);
  Row row{record(kind, "hreduce", summaries[0], p, n),
          record(kind, "mpi", summaries[1], p, n),
          {},
          std::string(team.local_path(kind, n * sizeof(double))),
          team.across_processes(kind, n * sizeof(double)),
          check};
  for (std::size_t i = 0; i < levels.size(); ++i) {
    row.levels.push_back(
        record(kind, cmp::hreduce_at_level_name(levels[i]), summaries[2 + i], p, n));
  }
  return row;
}

// Each level's columns, "[L] us" and "[L]/hreduce", at least 12 wide.
std::vector<std::string> level_headers(const std::vector<Reproducibility>& levels) {
  std::vector<std::string> headers;
  for (Reproducibility level : levels) {
    const std::string name(to_string(level));
    headers.push_back("[" + name + "] us");
    headers.push_back("[" + name + "]/hreduce");
  }
  return headers;
}

int column_width(const std::string& header) {
  return static_cast<int>(std::max<std::size_t>(12, header.size()));
}

void print_header(const std::vector<Reproducibility>& levels) {
  std::printf("%-22s %14s %12s %12s %12s ", "collective", "bytes/member", "hreduce us", "mpi us",
              "mpi/hreduce");
  for (const std::string& header : level_headers(levels)) {
    std::printf(" %*s", column_width(header), header.c_str());
  }
  std::printf(" %10s %10s  %-32s %s\n", "GB/s", "path", "across processes", "check");
}

bool noisy(const Row& row) {
  bool any = row.hreduce.spread > kNoisySpread || row.mpi.spread > kNoisySpread;
  for (const cmp::Record& r : row.levels) any |= r.spread > kNoisySpread;
  return any;
}

void print_row(const Row& row, const std::vector<Reproducibility>& levels) {
  const cmp::Record& ours = row.hreduce;
  std::printf("%-22s %14s %12.2f %12.2f %12.2f%c", ours.collective.c_str(),
              cmp::human_bytes(ours.bytes_per_member).c_str(), ours.median_seconds * 1e6,
              row.mpi.median_seconds * 1e6, row.mpi.median_seconds / ours.median_seconds,
              noisy(row) ? '!' : ' ');
  const std::vector<std::string> headers = level_headers(levels);
  for (std::size_t i = 0; i < row.levels.size(); ++i) {
    const double seconds = row.levels[i].median_seconds;
    std::printf(" %*.2f %*.2f", column_width(headers[2 * i]), seconds * 1e6,
                column_width(headers[2 * i + 1]), seconds / ours.median_seconds);
  }
  std::printf(" %10.2f %10s  %-32s %s\n", ours.gbps, row.path.c_str(), row.across.c_str(),
              row.check.c_str());
  std::fflush(stdout);
}

// Rank 0, before the table: what runs, the buffers, the columns.
void print_preamble(Team& team, const Args& args, const std::vector<Collective>& collectives,
                    std::size_t largest, const std::vector<Reproducibility>& levels) {
  print_explanations(team, collectives, largest);
  std::printf("  hreduce's buffers: %s\n",
              args.has("--zero-copy")
                  ? "from Team::allocate (the node's processes read and write them in place)"
                  : "private (copied through the node's staging chunks)");
  std::printf(
      "mpi/hreduce: MPI's time / hreduce's time (> 1: hreduce faster); '!' after it: hreduce's "
      "or MPI's samples spread more than %.0f%% (interquartile range / median), so the ratio is "
      "noise (a busy machine: rerun on a quiet one)\n",
      kNoisySpread * 100);
  if (!levels.empty()) {
    std::printf(
        "[L]: hreduce with per-call reproducibility = L, sampled in turn with the rest; "
        "[L]/hreduce: its time / hreduce's (run_to_run) time (> 1: what L costs)\n");
  }
  print_header(levels);
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
  const std::vector<Reproducibility> levels = chosen_levels(args);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const bool speaker = rank == 0;
  const std::string title = "hreduce bench --mpi: " + std::to_string(team.size()) + " members in " +
                            std::to_string(team.processes()) + " processes on " +
                            team.topology().source() +
                            (args.has("--zero-copy") ? ", buffers from Team::allocate" : "");
  // Unwritable output paths fail now, not after minutes of measuring.
  if (!write_reports(speaker, args, {}, title)) return 1;
  if (speaker) print_preamble(team, args, collectives, sizes.back(), levels);
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
  const int rows = static_cast<int>(collectives.size() * sizes.size());
  int done = 0, noisy_rows = 0;
  Progress progress(rows, "hreduce bench --mpi", speaker);
  for (Collective kind : collectives) {
    for (std::size_t bytes : sizes) {
      const Row row = measure(team, kind, bytes, min_seconds, pool ? &*pool : nullptr, levels);
      if (speaker) print_row(row, levels);
      progress.finished(++done, std::string(name_of(kind)) + " " + cmp::human_bytes(bytes));
      all_ok &= row.check == "ok";
      noisy_rows += noisy(row) ? 1 : 0;
      records.insert(records.end(), {row.hreduce, row.mpi});
      records.insert(records.end(), row.levels.begin(), row.levels.end());
    }
  }
  if (speaker) print_noise_note(noisy_rows, rows);
  if (!write_reports(speaker, args, records, title)) return 1;
  if (!all_ok) {
    if (speaker) std::fprintf(stderr, "hreduce bench: some results differ (see column check)\n");
    return 1;
  }
  return 0;
}

}  // namespace hreduce::cli
