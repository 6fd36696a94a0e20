// The collectives suite's main: Google Benchmark with the suite's defaults
// (5 repetitions, short repetitions, aggregates only on the console), the
// machine as context, and after the run a ratio table drawn from the median
// of each benchmark's repetitions: per case, hreduce's median time and GB/s
// and, per baseline, baseline median / hreduce median.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/suite.hpp"
#include "src/compare/text_output.hpp"

namespace hreduce::bench {
namespace {

// Prepended to the command line, so the user's own flags, coming later,
// win. (Setting them per benchmark instead would silently override the
// flags.) The console then shows mean, median, stddev and cv per benchmark;
// --benchmark_out files still get every repetition.
const char* const kSuiteDefaults[] = {
    "--benchmark_repetitions=5",
    "--benchmark_min_time=0.05",
    "--benchmark_display_aggregates_only=true",
};

std::vector<char*> with_suite_defaults(int argc, char** argv) {
  std::vector<char*> args;
  args.push_back(argv[0]);
  for (const char* flag : kSuiteDefaults) args.push_back(const_cast<char*>(flag));
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);  // argv[argc] is null by convention
  return args;
}

void print_help() {
  benchmark::PrintDefaultHelp();
  std::printf(
      "\ncollectives_bench: hreduce against OpenMP, oneTBB and the limit kernel.\n"
      "  Defaults: --benchmark_repetitions=5 --benchmark_min_time=0.05\n"
      "            --benchmark_display_aggregates_only=true (all overridable)\n"
      "  HREDUCE_BENCH_MAX_BYTES=N  measure only sizes up to N bytes per member\n"
      "  Names: BM_<Collective>_<type>/<implementation>/members:M/bytes:B\n");
}

// --------------------------------------------------------------- context ---

std::string join(const std::vector<std::int64_t>& values) {
  std::string text;
  for (std::int64_t v : values) text += (text.empty() ? "" : ",") + std::to_string(v);
  return text;
}

void add_context() {
  const Suite& suite = Suite::get();
  const Topology& m = suite.machine();
  benchmark::AddCustomContext(
      "topology", m.source() + ": " + std::to_string(m.count(Level::package)) + " package(s), " +
                      std::to_string(m.count(Level::numa)) + " NUMA node(s), " +
                      std::to_string(m.count(Level::core)) + " core(s), " +
                      std::to_string(m.pu_count()) + " PU(s)");
  benchmark::AddCustomContext(
      "hreduce_baselines",
      "openmp_reduction: OpenMP array-section reduction (reduce, allreduce only); "
      "openmp_sliced: slice-parallel OpenMP, each thread reducing a slice across members; "
      "tbb: oneTBB parallel_for over the same slice kernel; "
      "limit: each input read once and each output written once on the team's threads "
      "(no collective computed); memcpy: one thread's glibc memcpy. "
      "All on the same buffers, pinned where hreduce's members are.");
  std::vector<std::int64_t> members;
  for (int p : suite.team_sizes()) members.push_back(p);
  benchmark::AddCustomContext("hreduce_team_sizes", join(members));
  benchmark::AddCustomContext("hreduce_bytes_per_member", join(sizes_per_member()));
  benchmark::AddCustomContext(
      "hreduce_counters",
      "time: per collective call (batches of >= 1 ms); GB/s: every input once plus every "
      "defined output once, over the per-call time; bytes: one member's input");
}

void register_all() {
  register_reduce_benchmarks();
  register_allreduce_benchmarks();
  register_reduce_scatter_block_benchmarks();
  register_scan_benchmarks();
  register_exscan_benchmarks();
  register_limit_benchmarks();
}

// -------------------------------------------------------------- reporter ---

struct Median {
  double seconds = 0;  // per call
  double gbps = 0;
  double cv = -1;  // of the time over repetitions; -1: one repetition only
};

struct RowKey {
  std::size_t topic = 0;  // index in Registry::topics()
  int members = 0;        // 0 for memcpy
  std::int64_t bytes = 0;
  auto operator<=>(const RowKey&) const = default;
};

using Rows = std::map<RowKey, std::map<std::string, Median>>;  // by implementation

// The benchmarks' args as registered: "members:M/bytes:B" or "bytes:B".
bool parse_args(const std::string& args, int& members, std::int64_t& bytes) {
  long long b = 0;
  members = 0;
  if (std::sscanf(args.c_str(), "members:%d/bytes:%lld", &members, &b) == 2 ||
      std::sscanf(args.c_str(), "bytes:%lld", &b) == 1) {
    bytes = b;
    return true;
  }
  return false;
}

// Shows everything through the reporter --benchmark_format asks for, and
// keeps the median of each benchmark (or its only run, with one repetition)
// for the ratio table.
class RatioReporter final : public benchmark::ConsoleReporter {
 public:
  RatioReporter() : shown_(benchmark::CreateDefaultDisplayReporter()) {}

  bool ReportContext(const Context& context) override {
    // Google Benchmark points this reporter's streams; the shown one follows.
    shown_->SetOutputStream(&GetOutputStream());
    shown_->SetErrorStream(&GetErrorStream());
    return shown_->ReportContext(context);
  }

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) keep(run);
    shown_->ReportRuns(runs);
  }

  void Finalize() override { shown_->Finalize(); }

  const Rows& rows() const { return rows_; }
  int errors() const { return errors_; }
  // JSON or CSV on stdout must stay parseable, so the table then goes to
  // stderr.
  bool shows_console() const {
    return dynamic_cast<const benchmark::ConsoleReporter*>(shown_.get()) != nullptr;
  }

 private:
  void keep(const Run& run) {
    if (run.error_occurred) {
      ++errors_;
      return;
    }
    const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
    const bool cv = run.run_type == Run::RT_Aggregate && run.aggregate_name == "cv";
    const bool only_run = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
    if (!median && !cv && !only_run) return;
    Median* m = slot(run);
    if (m == nullptr) return;
    if (cv) {
      m->cv = run.real_accumulated_time;  // a fraction (aggregate_unit: percentage)
      return;
    }
    m->seconds = run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
    const auto gbps = run.counters.find("GB/s");
    if (gbps != run.counters.end()) m->gbps = gbps->second.value;
  }

  Median* slot(const Run& run) {
    const Family* family = Registry::get().find(run.run_name.function_name);
    if (family == nullptr) return nullptr;
    RowKey key;
    if (!parse_args(run.run_name.args, key.members, key.bytes)) return nullptr;
    key.topic = Registry::get().topic_index(family->topic);
    return &rows_[key][family->implementation];
  }

  std::unique_ptr<benchmark::BenchmarkReporter> shown_;
  Rows rows_;
  int errors_ = 0;
};

// ----------------------------------------------------------- ratio table ---

constexpr Implementation kBaselines[] = {Implementation::openmp_reduction,
                                         Implementation::openmp_sliced, Implementation::tbb,
                                         Implementation::limit};

void print_table_header(std::FILE* out) {
  std::fprintf(out, "%-21s %-7s %7s %8s %11s %8s %6s", "collective", "type", "members", "bytes",
               "hreduce_us", "GB/s", "cv%");
  for (Implementation b : kBaselines) std::fprintf(out, " %16s", std::string(name_of(b)).c_str());
  std::fprintf(out, "\n");
}

void print_row(std::FILE* out, const Family& family, const RowKey& key,
               const std::map<std::string, Median>& by) {
  const auto ours = by.find("hreduce");
  const bool have_ours = ours != by.end() && ours->second.seconds > 0;
  std::fprintf(out, "%-21s %-7s %7d %8s", family.collective.c_str(), family.type.c_str(),
               key.members, cmp::human_bytes(static_cast<std::size_t>(key.bytes)).c_str());
  if (have_ours) {
    const Median& m = ours->second;
    std::fprintf(out, " %11.3f %8.2f", m.seconds * 1e6, m.gbps);
    if (m.cv >= 0) {
      std::fprintf(out, " %6.1f", m.cv * 100);
    } else {
      std::fprintf(out, " %6s", "-");
    }
  } else {
    std::fprintf(out, " %11s %8s %6s", "-", "-", "-");
  }
  for (Implementation b : kBaselines) {
    const auto theirs = by.find(std::string(name_of(b)));
    if (have_ours && theirs != by.end() && theirs->second.seconds > 0) {
      std::fprintf(out, " %16.2f", theirs->second.seconds / ours->second.seconds);
    } else {
      std::fprintf(out, " %16s", "-");
    }
  }
  std::fprintf(out, "\n");
}

void print_ratio_table(std::FILE* out, const Rows& rows) {
  if (rows.empty()) return;
  const auto& topics = Registry::get().topics();
  std::fprintf(out,
               "\nRatios of medians: baseline time / hreduce time per call (> 1: hreduce faster; "
               "limit: the fraction of the limit kernel's speed hreduce reaches)\n");
  print_table_header(out);
  std::vector<std::string> memcpy_lines;
  for (const auto& [key, by] : rows) {
    const Family& family = topics[key.topic];
    if (family.collective == "memcpy") {
      const auto m = by.find("memcpy");
      if (m == by.end() || m->second.seconds <= 0) continue;
      char line[128];
      std::snprintf(line, sizeof line, "  %8s: %8.2f GB/s (%.3f us)",
                    cmp::human_bytes(static_cast<std::size_t>(key.bytes)).c_str(), m->second.gbps,
                    m->second.seconds * 1e6);
      memcpy_lines.emplace_back(line);
      continue;
    }
    print_row(out, family, key, by);
  }
  if (!memcpy_lines.empty()) {
    std::fprintf(out, "\nContext: single-thread memcpy (read + write bytes per second, median)\n");
    for (const auto& line : memcpy_lines) std::fprintf(out, "%s\n", line.c_str());
  }
  std::fflush(out);
}

int run(int argc, char** argv) {
  std::vector<char*> args = with_suite_defaults(argc, argv);
  int count = static_cast<int>(args.size()) - 1;
  benchmark::Initialize(&count, args.data(), print_help);
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  add_context();
  register_all();

  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::cout.flush();
  print_ratio_table(reporter.shows_console() ? stdout : stderr, reporter.rows());
  benchmark::Shutdown();
  Suite::get().release();
  if (reporter.errors() > 0) {
    std::fprintf(stderr, "collectives_bench: %d benchmark run(s) failed (see ERROR OCCURRED)\n",
                 reporter.errors());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace hreduce::bench

int main(int argc, char** argv) {
  try {
    return hreduce::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collectives_bench: %s\n", e.what());
    return 2;
  }
}
