// `hreduce bench` comparison mode: for every case (collective, element type,
// size) hreduce and the in-process baselines — OpenMP's array-section
// reduction, hand-written slice-parallel OpenMP, oneTBB and the limit kernel
// — are checked against the sequential oracle and then sampled interleaved
// on the same buffers and the same pinned cores. Each row gives hreduce's
// median and, per baseline, baseline time / hreduce time: above 1 means
// hreduce is faster. The limit kernel is a reference, not a bound: the
// least traffic plus a barrier per call (limit_runner.cpp). With
// --reproducibility, hreduce also runs at each named level (per-call
// options) in the same rounds, and the row gives that time and its ratio to
// hreduce's own, so a level's cost is read off at every size. With
// --breakdown, hreduce's calls are also timed per level of the hierarchy
// (breakdown_columns.hpp).
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hreduce/error.hpp"
#include "src/cli/bench.hpp"
#include "src/cli/breakdown_columns.hpp"
#include "src/cli/progress.hpp"
#include "src/compare/comparison.hpp"
#include "src/compare/record.hpp"
#include "src/compare/text_output.hpp"

namespace hreduce::cli {
namespace {

namespace cmp = hreduce::detail::compare;

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// The values named in a comma-separated `list`, each one of `all`.
template <class T, std::size_t N>
std::vector<T> named_values(const char* option, const std::string& list, const T (&all)[N]) {
  std::vector<T> chosen;
  for (const std::string& name : split_list(list)) {
    const auto known = std::find_if(std::begin(all), std::end(all),
                                    [&](T value) { return cmp::name_of(value) == name; });
    if (known == std::end(all)) {
      std::string names;
      for (T value : all) names += (names.empty() ? "" : ", ") + std::string(cmp::name_of(value));
      throw ArgumentError("hreduce bench: " + std::string(option) + ": '" + name +
                          "' is not one of " + names);
    }
    chosen.push_back(*known);
  }
  return chosen;
}

std::vector<cmp::Implementation> chosen_implementations(const Args& args) {
  const auto chosen = named_values(
      "--implementations",
      args.get("--implementations").value_or("hreduce,openmp_reduction,openmp_sliced,tbb,limit"),
      cmp::kImplementations);
  if (chosen.empty() || chosen.front() != cmp::Implementation::hreduce) {
    throw ArgumentError(
        "hreduce bench: --implementations must start with hreduce (ratios are to it)");
  }
  return chosen;
}

// By default double sum for every collective, and int32 sum and MINLOC
// pairs for allreduce (as the bench/ suite does); --types puts every listed
// type on every chosen collective.
std::vector<cmp::Case> chosen_cases(const Args& args, const std::vector<std::size_t>& sizes) {
  std::vector<cmp::Case> cases;
  const auto collectives = chosen_collectives(args);
  auto add = [&](cmp::Collective c, const std::string& type) {
    for (std::size_t bytes : sizes) cases.push_back({c, type, bytes});
  };
  if (auto types = args.get("--types")) {
    for (cmp::Collective c : collectives) {
      for (const std::string& type : split_list(*types)) {
        cmp::check_type(type);
        add(c, type);
      }
    }
  } else {
    for (cmp::Collective c : collectives) {
      add(c, "double");
      if (c == cmp::Collective::allreduce) {
        add(c, "int32");
        add(c, "double_int");
      }
    }
  }
  return cases;
}

// The level columns' headers: "[L] us" and "[L]/hreduce".
std::string level_time_header(Reproducibility level) {
  return "[" + std::string(to_string(level)) + "] us";
}
std::string level_ratio_header(Reproducibility level) {
  return "[" + std::string(to_string(level)) + "]/hreduce";
}

// What the table's columns are, beyond the fixed ones.
struct TableShape {
  std::vector<cmp::Implementation> implementations;  // hreduce first
  std::vector<Reproducibility> levels;               // --reproducibility
  bool breakdown = false;                            // --breakdown
};

void print_header(const TableShape& shape) {
  const auto& implementations = shape.implementations;
  std::printf("%-21s %-10s %8s %11s %8s %7s ", "collective", "type", "bytes", "hreduce us", "GB/s",
              "spread");
  if (shape.breakdown) print_breakdown_header();
  for (Reproducibility level : shape.levels) {
    std::printf(" %11s %11s", level_time_header(level).c_str(), level_ratio_header(level).c_str());
  }
  for (std::size_t i = 1; i < implementations.size(); ++i) {
    std::printf(" %16s",
                (std::string("×") + std::string(cmp::name_of(implementations[i]))).c_str());
  }
  std::printf("  check\n");
}

const cmp::Record* record_named(const cmp::CaseResult& result, const std::string& name) {
  for (const cmp::Record& r : result.records) {
    if (r.implementation == name) return &r;
  }
  return nullptr;
}

// Each level's time and its ratio to hreduce's (run_to_run); "-" where the
// level was skipped for this case.
void print_level_cells(const cmp::CaseResult& result, const std::vector<Reproducibility>& levels) {
  const cmp::Record& ours = result.records.front();
  for (Reproducibility level : levels) {
    const int time_width =
        static_cast<int>(std::max<std::size_t>(11, level_time_header(level).size()));
    const int ratio_width =
        static_cast<int>(std::max<std::size_t>(11, level_ratio_header(level).size()));
    if (const cmp::Record* at = record_named(result, cmp::hreduce_at_level_name(level))) {
      std::printf(" %*.2f %*.2f", time_width, at->median_seconds * 1e6, ratio_width,
                  at->median_seconds / ours.median_seconds);
    } else {
      std::printf(" %*s %*s", time_width, "-", ratio_width, "-");
    }
  }
}

// Whether some implementation of the row spread past kNoisySpread.
bool noisy(const cmp::CaseResult& result) {
  return std::any_of(result.records.begin(), result.records.end(),
                     [](const cmp::Record& r) { return r.spread > kNoisySpread; });
}

void print_row(const cmp::Case& c, const cmp::CaseResult& result, const TableShape& shape) {
  const auto& implementations = shape.implementations;
  const cmp::Record& ours = result.records.front();
  std::printf("%-21s %-10s %8s %11.2f %8.2f %6.0f%%%c", ours.collective.c_str(), c.type.c_str(),
              cmp::human_bytes(ours.bytes_per_member).c_str(), ours.median_seconds * 1e6, ours.gbps,
              ours.spread * 100, noisy(result) ? '!' : ' ');
  if (shape.breakdown) print_breakdown_cells(ours);
  print_level_cells(result, shape.levels);
  for (std::size_t i = 1; i < implementations.size(); ++i) {
    const cmp::Record* theirs = record_named(result, std::string(cmp::name_of(implementations[i])));
    if (theirs) {
      std::printf(" %15.2f", theirs->median_seconds / ours.median_seconds);
    } else {
      std::printf(" %15s", "-");
    }
  }
  std::string check = "ok";
  if (!result.wrong.empty()) {
    check = "WRONG:";
    for (const auto& w : result.wrong) check += " " + w;
  }
  std::printf("  %s\n", check.c_str());
  std::fflush(stdout);
}

// Why a level's cells are "-": once per collective and type, under its first row.
void print_skip_notes(const cmp::Case& c, const cmp::CaseResult& result,
                      std::set<std::string>& noted) {
  for (const std::string& skipped : result.skipped) {
    const std::string note =
        std::string(cmp::name_of(c.collective)) + " " + c.type + ": " + skipped;
    if (noted.insert(note).second) std::printf("  note: %s (skipped)\n", note.c_str());
  }
}

void print_legend() {
  std::printf(
      "columns: spread = interquartile range of hreduce's samples / their median; '!' after it: "
      "some implementation of the row spread more than %.0f%%, so the row's ratios are noise "
      "(a busy machine: rerun on a quiet one)\n"
      "  ×baseline = baseline time / hreduce time (> 1: hreduce faster); ×limit likewise, "
      "against a kernel that moves the least bytes the collective needs and adds one barrier "
      "per call: below 1, the fraction of its speed hreduce reaches; above 1 (small vectors, "
      "where the barrier is most of its time), hreduce's own synchronisation costs less\n",
      kNoisySpread * 100);
}

double memcpy_gbps(std::size_t bytes) {
  std::vector<double> per_call;
  const int calls = std::max<int>(1, static_cast<int>((16u << 20) / bytes));
  for (int i = 0; i < 5; ++i) per_call.push_back(cmp::memcpy_seconds(bytes, calls) / calls);
  return 2.0 * bytes / cmp::summarize(per_call).median / 1e9;
}

// Before the header: what the optional columns are.
void print_preamble(const TableShape& shape) {
  print_legend();
  if (shape.breakdown) print_breakdown_legend();
  if (!shape.levels.empty()) {
    std::printf(
        "columns [L]: hreduce with per-call reproducibility = L, sampled in turn with the "
        "rest; [L]/hreduce: its time / hreduce's (run_to_run) time (> 1: what L costs)\n");
  }
  print_header(shape);
}

// Every case measured and its row printed as it comes.
struct Table {
  std::vector<cmp::Record> records;
  bool all_right = true;
  int noisy_rows = 0;
  int levels_missed = 0;  // --breakdown: rows whose levels do not add up
};

Table measure_cases(Team& team, const std::vector<cmp::Case>& cases, const TableShape& shape,
                    const cmp::SamplingOptions& sampling) {
  Table table;
  std::set<std::string> noted;
  Progress progress(static_cast<int>(cases.size()), "hreduce bench");
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const cmp::Case& c = cases[k];
    const std::string label = std::string(cmp::name_of(c.collective)) + " " + c.type + " " +
                              cmp::human_bytes(c.bytes_per_member);
    progress.starting(static_cast<int>(k), label);
    cmp::CaseResult result =
        cmp::measure_case(team, c, shape.implementations, sampling, shape.levels);
    progress.clear();
    print_row(c, result, shape);
    print_skip_notes(c, result, noted);
    progress.finished(static_cast<int>(k + 1), label);
    table.all_right &= result.wrong.empty();
    table.noisy_rows += noisy(result) ? 1 : 0;
    if (shape.breakdown && !levels_add_up(result.records.front())) ++table.levels_missed;
    table.records.insert(table.records.end(), result.records.begin(), result.records.end());
  }
  progress.clear();
  return table;
}

}  // namespace

void print_noise_note(int noisy_rows, int rows) {
  if (noisy_rows == 0) return;
  std::printf(
      "note: %d of %d rows spread more than %.0f%% (marked !): their ratios are noise; rerun "
      "them on a quiet machine\n",
      noisy_rows, rows, kNoisySpread * 100);
}

std::vector<cmp::Collective> chosen_collectives(const Args& args) {
  if (!args.has("--collectives"))
    return {std::begin(cmp::kCollectives), std::end(cmp::kCollectives)};
  return named_values("--collectives", *args.get("--collectives"), cmp::kCollectives);
}

int run_comparison(Team& team, const Args& args, const std::vector<std::size_t>& sizes,
                   double min_seconds) {
  const TableShape shape{chosen_implementations(args), chosen_levels(args),
                         args.has("--breakdown")};
  const auto cases = chosen_cases(args, sizes);
  // Unwritable output paths fail now, not after minutes of measuring.
  if (auto path = args.get("--json")) cmp::write_json(*path, {});
  if (auto path = args.get("--plot")) cmp::write_svg(*path, {}, "hreduce bench");
  cmp::SamplingOptions sampling;
  sampling.min_seconds = min_seconds;
  sampling.settle_seconds = args.get_int("--settle-us", 10000, 0) / 1e6;
  sampling.breakdown = shape.breakdown;
  std::printf("context: single-thread memcpy %.1f GB/s (read + write, %s)\n",
              memcpy_gbps(sizes.back()), cmp::human_bytes(sizes.back()).c_str());
  print_preamble(shape);
  const Table table = measure_cases(team, cases, shape, sampling);
  print_noise_note(table.noisy_rows, static_cast<int>(cases.size()));
  if (shape.breakdown) print_levels_note(table.levels_missed, static_cast<int>(cases.size()));
  if (auto path = args.get("--json")) cmp::write_json(*path, table.records);
  if (auto path = args.get("--plot")) {
    cmp::write_svg(*path, table.records,
                   "hreduce bench: " + std::to_string(team.size()) + " members on " +
                       team.topology().source());
  }
  if (!table.all_right) {
    std::fprintf(stderr, "hreduce bench: some results differ from the sequential oracle\n");
    return 1;
  }
  return 0;
}

}  // namespace hreduce::cli
