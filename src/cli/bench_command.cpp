// `hreduce bench`: the main job. Builds the team from the machine options,
// then runs the comparison (hreduce against OpenMP, oneTBB and the limit
// kernel, interleaved) or, with --mpi, hreduce against MPI's own collectives
// over MPI processes.
#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <mpi.h>

#include "hreduce/mpi.hpp"
#include "hreduce/team.hpp"
#include "machine_options.hpp"
#include "src/cli/bench.hpp"
#include "src/cli/byte_size.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/mpi_session.hpp"
#include "src/common/names.hpp"

namespace hreduce::cli {
namespace {

CollectiveOptions collective_options(const Args& args, int radix) {
  CollectiveOptions options;
  options.radix = radix;
  if (auto name = args.get("--algorithm")) {
    auto algorithm = parse_algorithm(*name);
    if (!algorithm) {
      throw ArgumentError("hreduce bench: --algorithm wants " +
                          detail::enum_names_text(detail::kAlgorithmNames) + ", got '" + *name +
                          "'");
    }
    options.algorithm = *algorithm;
  }
  if (auto name = args.get("--tree")) {
    auto shape = parse_tree_shape(*name);
    if (!shape) {
      throw ArgumentError("hreduce bench: --tree wants " +
                          detail::enum_names_text(detail::kTreeShapeNames) + ", got '" + *name +
                          "'");
    }
    options.tree = *shape;
  }
  options.tree_max_bytes = args.get_bytes("--tree-max-bytes", options.tree_max_bytes, 0);
  options.tree_min_members = args.get_int("--tree-min-members", options.tree_min_members, 1);
  options.chunk_bytes = args.get_bytes("--chunk-bytes", options.chunk_bytes, 8);
  return options;
}

// Refuses, before MPI starts, options that mean nothing in the chosen mode.
void reject_options(const Args& args, std::initializer_list<const char*> names, const char* why) {
  for (const char* name : names) {
    if (args.has(name)) throw ArgumentError(std::string("hreduce bench: ") + name + why);
  }
}

[[noreturn]] void bad_level(const std::string& got) {
  throw ArgumentError("hreduce bench: --reproducibility wants " +
                      detail::enum_names_text(detail::kReproducibilityNames) +
                      " (several: comma-separated), got '" + got + "'");
}

}  // namespace

std::vector<Reproducibility> chosen_levels(const Args& args) {
  const auto list = args.get("--reproducibility");
  if (!list) return {};
  std::vector<Reproducibility> levels;
  bool named_any = false;
  std::stringstream names(*list);
  for (std::string name; std::getline(names, name, ',');) {
    if (name.empty()) continue;
    const auto level = parse_reproducibility(name);
    if (!level) bad_level(name);
    named_any = true;
    // run_to_run is what plain hreduce measures already.
    if (*level == Reproducibility::run_to_run) continue;
    if (std::find(levels.begin(), levels.end(), *level) == levels.end()) levels.push_back(*level);
  }
  if (!named_any) bad_level(*list);
  return levels;
}

std::vector<std::size_t> explicit_sizes(const std::string& list) {
  std::vector<std::size_t> sizes;
  std::stringstream entries(list);
  for (std::string entry; std::getline(entries, entry, ',');) {
    sizes.push_back(byte_count_or_throw("hreduce bench", "--sizes (in '" + list + "')", entry, 1));
  }
  if (sizes.empty()) throw ArgumentError("hreduce bench: --sizes is empty");
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

std::vector<std::size_t> bench_sizes(std::size_t max_bytes, std::size_t step) {
  std::vector<std::size_t> sizes;
  for (std::size_t bytes = 8; bytes <= max_bytes; bytes *= step) sizes.push_back(bytes);
  if (sizes.empty() || sizes.back() != max_bytes) sizes.push_back(max_bytes);
  return sizes;
}

int bench_command(const std::vector<std::string>& argv) {
  std::set<std::string> valued = machine_valued_options();
  valued.insert({"--max-bytes", "--min-time-ms", "--step", "--algorithm", "--tree",
                 "--tree-max-bytes", "--tree-min-members", "--chunk-bytes", "--json", "--plot",
                 "--implementations", "--collectives", "--types", "--settle-us",
                 "--node-chunk-bytes", "--reproducibility", "--sizes"});
  const Args args("hreduce bench", argv,
                  {"--mpi", "--no-shared-memory", "--zero-copy", "--no-run-ahead", "--breakdown"},
                  valued);
  if (args.has("--mpi")) {
    reject_options(args, {"--types", "--settle-us"}, " does not go with --mpi");
    mpi_timed(args);  // a bad list fails before MPI starts
  } else {
    reject_options(args, {"--node-chunk-bytes", "--no-shared-memory", "--zero-copy"},
                   " needs --mpi");
  }
  chosen_levels(args);  // a bad level fails before MPI starts and the team is built
  if (args.has("--sizes")) {
    reject_options(args, {"--max-bytes", "--step"}, " does not go with --sizes");
    explicit_sizes(*args.get("--sizes"));  // as early as a bad level
  }
  const MpiSession mpi(args.has("--mpi"));
  const MachineChoice choice = choose_machine("hreduce bench", args);
  const std::size_t max_bytes = args.get_bytes("--max-bytes", std::size_t{64} << 20, 8);
  const double min_seconds = args.get_int("--min-time-ms", 200, 1) / 1000.0;
  const std::size_t step = static_cast<std::size_t>(args.get_int("--step", 8, 2));

  TeamOptions options;
  options.members = choice.placement.members();
  options.placement = choice.placement.policy;
  options.topology = choice.topology;
  options.levels = choice.levels;
  options.collectives = collective_options(args, choice.radix);
  options.run_ahead = !args.has("--no-run-ahead");
  if (mpi.active && !args.has("--members")) options.members = 1;
  Team team = mpi.active
                  ? make_mpi_team(MPI_COMM_WORLD, options.members, options, mpi_team_options(args))
                  : Team(options);
  if (mpi.rank == 0) {
    std::printf(
        "hreduce bench: %d members in %d process(es) (%s placement) on %s; %d package(s), "
        "%d NUMA node(s), %d core(s), %d PU(s)\n",
        team.size(), team.processes(), std::string(to_string(options.placement)).c_str(),
        team.topology().source().c_str(), team.topology().count(Level::package),
        team.topology().count(Level::numa), team.topology().count(Level::core),
        team.topology().pu_count());
    const CollectiveOptions& o = options.collectives;
    std::printf(
        "options: algorithm %s, tree %s, tree_max_bytes %zu, tree_min_members %d, chunk_bytes "
        "%zu, run_ahead %s\n",
        std::string(to_string(o.algorithm)).c_str(), std::string(to_string(o.tree)).c_str(),
        o.tree_max_bytes, o.tree_min_members, o.chunk_bytes, options.run_ahead ? "on" : "off");
  }
  const std::vector<std::size_t> sizes =
      args.has("--sizes") ? explicit_sizes(*args.get("--sizes")) : bench_sizes(max_bytes, step);
  if (mpi.active) return run_mpi_bench(team, args, sizes, min_seconds);
  return run_comparison(team, args, sizes, min_seconds);
}

}  // namespace hreduce::cli
