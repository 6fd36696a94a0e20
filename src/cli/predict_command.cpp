// `hreduce predict`: what a call would cost on a described machine, level by
// level, replaying the runtime's own decisions (docs/model.md), beside the
// flat-MPI algorithms on the same machine; with --validate, predictions
// against measurements on this machine.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "src/cli/args.hpp"
#include "src/cli/commands.hpp"
#include "src/model/explain.hpp"
#include "src/model/machines.hpp"
#include "src/model/report.hpp"
#include "src/model/validation.hpp"
#include "src/probe/machine_json.hpp"

namespace hreduce::cli {
namespace {

namespace md = detail::model;
namespace pr = detail::probe;

constexpr const char* kPredictOptions = R"(predict options:
  --machine M        this (probed now, quickly), 2x64, 1x192, or a file from
                     `hreduce probe --json` (default: this)
  --layout NxPxT     nodes x processes per node x threads per process
                     (default: 1x1x<cores of the machine>)
  --placement P      compact (default) or scatter: the members of a node on its PUs
  --collectives L    any of reduce, allreduce, reduce_scatter_block, scan, exscan
                     (default: all)
  --sizes L          bytes per member, comma-separated (default: 8,64,512,4Ki,32Ki,
                     256Ki,2Mi,16Mi)
  --types L          any of double, int32, double_int (default: double)
  --json FILE        one record per call: predicted_seconds, levels, flat_mpi, ...
  --plot FILE.svg    predicted time against size, hreduce and each flat algorithm
  --validate         probe this machine, measure held-out calls (threads 1x1x2, node
                     level 1x2x1 with and without zero copy, messages 2x1x1 under
                     mpirun) and print prediction, measurement and error
  --quick            with --validate: a few calls only
  --layouts L        with --validate: the layouts to measure, NxPxT comma-separated,
                     -zc after one for buffers in the node segment (default:
                     1x1x2,1x2x1,1x2x1-zc,2x1x1)
  --repeats R        with --validate: measure every layout R times in turns (default 3,
                     --quick 1); a case's measurement is the median of its runs, and
                     the runs' spread is printed beside the model's error
  --measured FILE    with --validate: measure nothing; predict the measurements of an
                     earlier `predict --validate --json FILE` again, on --machine (a
                     probe file, e.g. the one that run wrote), and print the errors
  --zero-copy        the team's buffers come from Team::allocate (no staging)
  --explain          after each call, every path and algorithm the runtime could take
                     at each level, with its predicted time, the runtime's choice marked
)";

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = text.find(',', at);
    const std::string item = text.substr(at, comma == std::string::npos ? comma : comma - at);
    if (!item.empty()) items.push_back(item);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return items;
}

md::Request request_from(const Args& args) {
  md::Request r;
  if (auto l = args.get("--collectives")) r.collectives = split_list(*l);
  if (auto l = args.get("--types")) r.types = split_list(*l);
  if (auto l = args.get("--sizes")) {
    r.sizes.clear();
    for (const std::string& s : split_list(*l)) {
      r.sizes.push_back(byte_count_or_throw("hreduce predict", "--sizes", s, 1));
    }
  }
  if (auto p = args.get("--placement")) {
    const auto policy = parse_placement(*p);
    if (!policy) {
      throw ArgumentError("hreduce predict: --placement '" + *p + "' is not compact or scatter");
    }
    r.settings.placement = *policy;
  }
  r.settings.zero_copy = args.has("--zero-copy");
  return r;
}

// --explain: per call, the candidates of each level, fastest first.
void print_candidates(const md::MachinePrices& prices, const Topology& node,
                      const md::Request& request, const std::vector<md::PredictedRow>& rows) {
  for (const md::PredictedRow& row : rows) {
    std::vector<md::Candidate> candidates =
        md::explain_candidates(prices, node, request.layout, row.call, request.settings);
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const md::Candidate& a, const md::Candidate& b) {
                       return a.level < b.level || (a.level == b.level && a.seconds < b.seconds);
                     });
    std::printf("\n%s %s %zu B:\n", row.call.collective.c_str(), row.call.type.c_str(),
                row.call.bytes_per_member);
    for (const md::Candidate& c : candidates) {
      std::printf("  %-18s %-24s %12.2f us%s\n", c.level.c_str(), c.what.c_str(), c.seconds * 1e6,
                  c.chosen ? "  <- the runtime's choice" : "");
    }
  }
}

int predict(const Args& args) {
  const auto started = std::chrono::steady_clock::now();
  const std::string machine_name = args.get("--machine").value_or("this");
  const md::MachinePrices prices(md::load_machine(
      machine_name, [](const std::string& step) { std::cerr << "probe: " << step << '\n'; }));
  const Topology node = md::topology_of(prices.topology());
  md::Request request = request_from(args);
  request.layout = args.has("--layout") ? md::parse_layout(*args.get("--layout"))
                                        : md::Layout{1, 1, std::max(1, node.count(Level::core))};
  const std::vector<md::PredictedRow> rows = md::predict_rows(prices, node, request);
  const long long members = request.layout.members();
  std::printf(
      "hreduce predict: machine %s (%zu PUs, %d NUMA nodes), layout %s (%lld members), "
      "%s placement: predicted, not measured\n",
      machine_name.c_str(), prices.topology().pus.size(), prices.numa_nodes(),
      md::to_string(request.layout).c_str(), members,
      std::string(to_string(request.settings.placement)).c_str());
  md::print_table(rows, false);
  if (!rows.empty())
    std::printf("decisions (first row): %s\n", rows.front().hreduce.decisions.c_str());
  if (args.has("--explain")) print_candidates(prices, node, request, rows);
  if (auto path = args.get("--json")) {
    pr::Json::Array records;
    for (const md::PredictedRow& r : rows) records.push_back(md::to_json(r, members));
    pr::write_text_file(*path, pr::Json(std::move(records)).dump() + "\n", "--json");
  }
  if (auto path = args.get("--plot")) {
    md::write_plot(*path, rows, members,
                   "hreduce predict: " + machine_name + ", " + md::to_string(request.layout) +
                       " (predicted, not measured)");
  }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
  std::printf("%zu prediction(s) in %.2f s\n", rows.size(), took.count());
  return 0;
}

}  // namespace

int predict_command(const std::vector<std::string>& argv) {
  const Args args("hreduce predict", argv, {"--validate", "--quick", "--zero-copy", "--explain"},
                  {"--machine", "--layout", "--placement", "--collectives", "--sizes", "--types",
                   "--json", "--plot", "--layouts", "--measured", "--repeats"});
  if (args.has("--validate") && args.has("--measured")) {
    const std::string machine_name = args.get("--machine").value_or("this");
    const md::MachinePrices prices(md::load_machine(
        machine_name, [](const std::string& step) { std::cerr << "probe: " << step << '\n'; }));
    return md::validate_measured(prices, *args.get("--measured"), args.get("--json"));
  }
  if (args.has("--validate")) {
    const bool quick = args.has("--quick");
    const int repeats = args.get_int("--repeats", quick ? 1 : 3, 1);
    return md::validate(request_from(args), quick, args.get("--json"), args.get("--layouts"),
                        repeats);
  }
  return predict(args);
}

extern const Command kPredictCommand{
    "predict",
    "predict a call's time per level on a described machine (this, 2x64,\n"
    "          1x192, or a probe file) beside flat MPI; --validate checks it here",
    kPredictOptions, false, predict_command};

}  // namespace hreduce::cli
