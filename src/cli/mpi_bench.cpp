// `hreduce bench --mpi`: hreduce on a team spanning MPI processes against
// MPI's own collectives on the same ranks (double sum), each hreduce result
// verified against a sequential oracle (the calls and checks:
// mpi_bench_calls.hpp; the table: mpi_bench_table.hpp).
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
// time and its ratio to hreduce's run_to_run time. With --breakdown, every
// member of every process times its calls per level of the hierarchy
// (src/common/level_clock.hpp) between the barriers of each hreduce sample;
// a row's levels are the mean over all the team's members.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

#include "hreduce/error.hpp"
#include "hreduce/team.hpp"
#include "src/cli/bench.hpp"
#include "src/cli/breakdown_columns.hpp"
#include "src/cli/mpi_bench_calls.hpp"
#include "src/cli/mpi_bench_table.hpp"
#include "src/cli/progress.hpp"
#include "src/common/level_clock.hpp"
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
using detail::LevelClock;
using detail::LevelSeconds;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One sample of one side: the slowest process's seconds for the batch and,
// for hreduce with --breakdown, its levels per call.
struct Sample {
  double seconds = 0;
  std::optional<LevelSeconds> levels;
};

// The levels per call of the whole team's members: this process's clocks
// summed, then summed over the processes, over members × batch. The
// clocks are cleared for the next sample.
LevelSeconds team_levels(Team& team, LevelClock* clocks, int batch) {
  LevelSeconds mine, all;
  for (int i = 0; i < team.local_size(); ++i) {
    mine += clocks[i].seconds();
    clocks[i].reset();
  }
  MPI_Allreduce(mine.seconds.data(), all.seconds.data(), detail::kCallLevels, MPI_DOUBLE, MPI_SUM,
                MPI_COMM_WORLD);
  return all.scaled(1.0 / (static_cast<double>(team.size()) * batch));
}

// `clocks` (one per member of this process, or null): --breakdown.
Sample hreduce_sample(Team& team, Collective kind, Buffers& b, std::size_t n, int batch,
                      detail::OptionsRef options, LevelClock* clocks) {
  double seconds = 0;
  team.run([&](Member& m) {
    m.barrier();
    LevelClock* clock = clocks != nullptr ? &clocks[m.rank() - b.first] : nullptr;
    if (clock != nullptr) clock->start();
    const auto start = Clock::now();
    for (int i = 0; i < batch; ++i) call(m, kind, b, n, options);
    m.barrier();
    if (m.rank() == b.first) seconds = seconds_since(start);
    // After the barrier, as the sample's time: a member whose last call
    // ended early waits there, and that wait is part of the sample.
    if (clock != nullptr) clock->stop();
  });
  Sample sample{slowest(seconds), std::nullopt};
  if (clocks != nullptr) sample.levels = team_levels(team, clocks, batch);
  return sample;
}

Sample mpi_sample(MpiCall& mpi, int batch) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = Clock::now();
  for (int i = 0; i < batch; ++i) mpi();
  MPI_Barrier(MPI_COMM_WORLD);
  return {slowest(seconds_since(start)), std::nullopt};
}

// Each side runs a batch of calls and returns the slowest process's
// seconds, so every process leaves the loop at the same sample. One summary
// per side, in order (with levels where the side gave them).
std::vector<cmp::Summary> sample_in_turn(const std::vector<std::function<Sample(int)>>& sides,
                                         double min_seconds) {
  int batch = 1;
  std::vector<std::vector<double>> per_call(sides.size());
  std::vector<std::vector<LevelSeconds>> levels(sides.size());
  const auto start = Clock::now();
  auto more = [&] {
    const std::size_t taken = per_call.front().size();
    return taken < 5 || (slowest(seconds_since(start)) < min_seconds && taken < 200);
  };
  std::vector<Sample> samples(sides.size());
  while (more()) {
    for (std::size_t i = 0; i < sides.size(); ++i) samples[i] = sides[i](batch);
    // Grow the batch until the fastest side's sample is long enough to time well.
    const auto fastest =
        std::min_element(samples.begin(), samples.end(),
                         [](const Sample& a, const Sample& b) { return a.seconds < b.seconds; });
    if (fastest->seconds < 1e-3 && batch < (1 << 20)) {
      batch *= 2;
      continue;
    }
    for (std::size_t i = 0; i < sides.size(); ++i) {
      per_call[i].push_back(samples[i].seconds / batch);
      if (samples[i].levels) levels[i].push_back(*samples[i].levels);
    }
  }
  std::vector<cmp::Summary> summaries;
  for (std::size_t i = 0; i < sides.size(); ++i) {
    summaries.push_back(cmp::summarize(per_call[i]));
    if (!levels[i].empty()) {
      summaries.back().levels = cmp::levels_at_median(per_call[i], levels[i]);
    }
  }
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

MpiRow measure(Team& team, Collective kind, std::size_t bytes, double min_seconds,
               const SharedPool* pool, const MpiTableShape& shape) {
  const int p = team.size();
  const std::size_t n = cmp::element_count<double>(kind, p, bytes);
  Buffers b(team, n, pool);
  MpiCall mpi(kind, b, n);
  const std::vector<CollectiveOptions> options = level_options(team, shape.levels);
  const std::string check = check_of(team, kind, mpi, b, n, shape.levels, options);
  std::unique_ptr<LevelClock[]> clocks;
  if (shape.breakdown) clocks = std::make_unique<LevelClock[]>(team.local_size());
  std::vector<std::function<Sample(int)>> sides = {
      [&](int batch) { return hreduce_sample(team, kind, b, n, batch, {}, clocks.get()); }};
  if (shape.with_mpi) sides.push_back([&](int batch) { return mpi_sample(mpi, batch); });
  const std::size_t first_level = sides.size();
  for (const CollectiveOptions& o : options) {
    sides.push_back([&](int batch) { return hreduce_sample(team, kind, b, n, batch, o, nullptr); });
  }
  const std::vector<cmp::Summary> summaries = sample_in_turn(sides, min_seconds);
  MpiRow row{record(kind, "hreduce", summaries[0], p, n),
             std::nullopt,
             {},
             std::string(team.local_path(kind, n * sizeof(double))),
             team.across_processes(kind, n * sizeof(double)),
             check};
  if (shape.with_mpi) row.mpi = record(kind, "mpi", summaries[1], p, n);
  for (std::size_t i = 0; i < shape.levels.size(); ++i) {
    row.levels.push_back(record(kind, cmp::hreduce_at_level_name(shape.levels[i]),
                                summaries[first_level + i], p, n));
  }
  return row;
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

// With --zero-copy: one pool for the largest vector any row needs.
std::optional<SharedPool> shared_pool(Team& team, const Args& args,
                                      const std::vector<Collective>& collectives,
                                      const std::vector<std::size_t>& sizes) {
  if (!args.has("--zero-copy")) return std::nullopt;
  std::size_t most = 0;
  for (Collective kind : collectives) {
    for (std::size_t bytes : sizes) {
      most = std::max(most, cmp::element_count<double>(kind, team.size(), bytes));
    }
  }
  return std::optional<SharedPool>(std::in_place, team, most);
}

// Every row measured and, on rank 0, printed as it comes.
struct MpiTable {
  std::vector<cmp::Record> records;
  bool all_ok = true;
  int noisy_rows = 0;
  int levels_missed = 0;  // --breakdown: rows whose levels do not add up
};

MpiTable measure_rows(Team& team, const std::vector<Collective>& collectives,
                      const std::vector<std::size_t>& sizes, double min_seconds,
                      const SharedPool* pool, const MpiTableShape& shape, bool speaker) {
  MpiTable table;
  const int rows = static_cast<int>(collectives.size() * sizes.size());
  int done = 0;
  Progress progress(rows, "hreduce bench --mpi", speaker);
  for (Collective kind : collectives) {
    for (std::size_t bytes : sizes) {
      const MpiRow row = measure(team, kind, bytes, min_seconds, pool, shape);
      if (speaker) print_mpi_row(row, shape);
      progress.finished(++done, std::string(name_of(kind)) + " " + cmp::human_bytes(bytes));
      table.all_ok &= row.check == "ok";
      table.noisy_rows += noisy(row) ? 1 : 0;
      if (shape.breakdown && !levels_add_up(row.hreduce)) ++table.levels_missed;
      table.records.push_back(row.hreduce);
      if (row.mpi) table.records.push_back(*row.mpi);
      table.records.insert(table.records.end(), row.levels.begin(), row.levels.end());
    }
  }
  return table;
}

}  // namespace

// hreduce alone times its calls back to back, with nothing of MPI's between
// them in the caches (what `predict --validate` compares with).
bool mpi_timed(const Args& args) {
  const std::optional<std::string> text = args.get("--implementations");
  if (!text || *text == "hreduce,mpi") return true;
  if (*text == "hreduce") return false;
  throw ArgumentError("hreduce bench --mpi: --implementations is hreduce or hreduce,mpi, not '" +
                      *text + "'");
}

int run_mpi_bench(Team& team, const Args& args, const std::vector<std::size_t>& sizes,
                  double min_seconds) {
  const std::vector<Collective> collectives = chosen_collectives(args);
  const MpiTableShape shape{chosen_levels(args), args.has("--breakdown"), mpi_timed(args)};
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const bool speaker = rank == 0;
  const std::string title = "hreduce bench --mpi: " + std::to_string(team.size()) + " members in " +
                            std::to_string(team.processes()) + " processes on " +
                            team.topology().source() +
                            (args.has("--zero-copy") ? ", buffers from Team::allocate" : "");
  // Unwritable output paths fail now, not after minutes of measuring.
  if (!write_reports(speaker, args, {}, title)) return 1;
  if (speaker) print_mpi_preamble(team, args, collectives, sizes.back(), shape);
  const std::optional<SharedPool> pool = shared_pool(team, args, collectives, sizes);
  const MpiTable table =
      measure_rows(team, collectives, sizes, min_seconds, pool ? &*pool : nullptr, shape, speaker);
  const int rows = static_cast<int>(collectives.size() * sizes.size());
  if (speaker) print_noise_note(table.noisy_rows, rows);
  if (speaker && shape.breakdown) print_levels_note(table.levels_missed, rows);
  if (!write_reports(speaker, args, table.records, title)) return 1;
  if (!table.all_ok) {
    if (speaker) std::fprintf(stderr, "hreduce bench: some results differ (see column check)\n");
    return 1;
  }
  return 0;
}

}  // namespace hreduce::cli
