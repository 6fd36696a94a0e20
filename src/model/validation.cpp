#include "src/model/validation.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "hreduce/error.hpp"
#include "src/model/machines.hpp"
#include "src/probe/machine_json.hpp"
#include "src/probe/probe.hpp"

namespace hreduce::detail::model {
namespace {

// A layout measured here, and how `hreduce bench` measures it.
struct Measured {
  Layout layout;
  std::string variant;   // "", "zero copy"
  std::string launcher;  // "" or the mpirun prefix
  std::string bench_options;
  bool zero_copy = false;
  bool types_allowed = true;  // bench --mpi measures double only
};

std::string quoted(const std::string& text) { return "'" + text + "'"; }

std::string this_program() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) throw Error("predict --validate: cannot find this program (/proc/self/exe)");
  return std::string(path, static_cast<std::size_t>(n));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& i : items) text += (text.empty() ? "" : ",") + i;
  return text;
}

// mpirun as the repository's own docs run it on a small machine; virtual
// nodes of `per_node` consecutive ranks where a layout has several nodes.
// Processes of several threads are left unbound, to place their members
// themselves: Open MPI binds each of one or two processes to one core, and
// two processes of eight threads on a 16-core machine took 50-60 us per 8
// B call, eight members sharing each core.
std::string mpirun(int processes, int per_node, int threads = 1) {
  return std::string("mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 ") +
         (threads > 1 ? "--bind-to none " : "") +
         (per_node > 0 ? "-x HREDUCE_PROCS_PER_NODE=" + std::to_string(per_node) + " " : "") +
         "-np " + std::to_string(processes) + " ";
}

// How `hreduce bench` measures a layout: threads alone in one process, else
// a team over MPI_COMM_WORLD (double only), several nodes as virtual nodes.
// The model prices hreduce's calls back to back on buffers the caches
// keep, so the bench times hreduce alone: no other runtime's calls between
// samples (MPI's own collective on 16 MiB doubled a two-process allreduce),
// and no idle time before each sample (there for other runtimes' spinning
// threads), in which other tenants of a shared host evict the buffers: 16
// MiB allreduce of two threads took 4.3 ms after it, 1.6-2.0 ms without.
Measured measured(const Layout& layout, bool zero_copy) {
  if (layout.nodes == 1 && layout.processes == 1) {
    return {
        layout,
        "",
        "",
        "--members " + std::to_string(layout.threads) + " --implementations hreduce --settle-us 0",
        false,
        true};
  }
  const int processes = layout.nodes * layout.processes;
  return {layout,
          zero_copy ? "zero copy" : "",
          mpirun(processes, layout.nodes > 1 ? layout.processes : 0, layout.threads),
          "--mpi --implementations hreduce --members " + std::to_string(layout.threads) +
              (zero_copy ? " --zero-copy" : ""),
          zero_copy,
          false};
}

// "1x16x1,1x16x1-zc,4x4x1": "-zc" measures with buffers in the node segment.
std::vector<Measured> parse_layouts(const std::string& text) {
  std::vector<Measured> layouts;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const bool zero_copy = item.size() > 3 && item.ends_with("-zc");
    if (zero_copy) item.resize(item.size() - 3);
    const Layout layout = parse_layout(item);
    if (zero_copy && layout.processes < 2) {
      throw ArgumentError("predict --validate: --layouts " + item +
                          "-zc: zero copy needs several processes per node");
    }
    layouts.push_back(measured(layout, zero_copy));
  }
  if (layouts.empty()) throw ArgumentError("predict --validate: --layouts is empty");
  return layouts;
}

std::vector<Measured> layouts_here() { return parse_layouts("1x1x2,1x2x1,1x2x1-zc,2x1x1"); }

// The probe with MPI figures between two virtual nodes; without mpirun, the
// local measurements alone. Run `run` writes machine<run>.json.
probe::MachineDescription probe_here(const std::string& program, const std::string& dir, int run) {
  const std::string name = dir + "/machine" + std::to_string(run);
  const std::string command = mpirun(2, 1) + quoted(program) + " probe --mpi --quick --json " +
                              name + ".json >" + name + ".log 2>&1";
  std::cerr << "predict --validate: probing (" << command << ")\n";
  if (std::system(command.c_str()) == 0) return probe::machine_from_json(read_file(name + ".json"));
  std::cerr << "predict --validate: the probe under mpirun failed (" << name
            << ".log); probing without MPI figures\n";
  probe::ProbeSettings settings;
  settings.quick = true;
  return probe::probe_machine(Topology::discover(), settings,
                              [](const std::string& s) { std::cerr << "probe: " << s << '\n'; });
}

std::vector<std::string> size_texts(const std::vector<std::size_t>& sizes) {
  std::vector<std::string> texts;
  for (std::size_t s : sizes) texts.push_back(std::to_string(s));
  return texts;
}

// One bench run; its hreduce records, each beside its prediction.
std::vector<PredictedRow> measure(const Measured& m, const Request& request,
                                  const MachinePrices& prices, const Topology& node,
                                  const std::string& program, const std::string& dir, int index) {
  const std::string json = dir + "/bench" + std::to_string(index) + ".json";
  std::string command = m.launcher + quoted(program) + " bench " + m.bench_options +
                        " --min-time-ms 100 --collectives " +
                        joined(collectives_or_default(request)) + " --sizes " +
                        joined(size_texts(sizes_or_default(request))) + " --json " + json;
  if (m.types_allowed) command += " --types " + joined(types_or_default(request));
  command += " >" + dir + "/bench" + std::to_string(index) + ".log 2>&1";
  std::cerr << "predict --validate: measuring " << to_string(m.layout) << ' ' << m.variant << " ("
            << command << ")\n";
  if (std::system(command.c_str()) != 0) {
    std::cerr << "predict --validate: that measurement failed; see " << dir << "\n";
    return {};
  }
  ModelSettings settings = request.settings;
  settings.zero_copy = m.zero_copy;
  const int cores = std::max(1, node.count(hreduce::Level::core));
  std::vector<PredictedRow> rows;
  const probe::Json records = probe::Json::parse(read_file(json));
  for (const probe::Json& r : records.as_array("records")) {
    if (r.at("implementation", "record").as_string("implementation") != "hreduce") continue;
    PredictedRow row;
    row.call = {r.at("collective", "record").as_string("collective"),
                static_cast<std::size_t>(r.at("bytes_per_member", "record").as_number("bytes")),
                r.at("type", "record").as_string("type")};
    row.layout = to_string(m.layout);
    row.variant = m.variant;
    row.measured_seconds = r.at("median_seconds", "record").as_number("median_seconds");
    row.oversubscribed = m.layout.members() > cores;
    row.hreduce = predict_hreduce(prices, node, m.layout, row.call, settings);
    row.flat = predict_flat_mpi(prices, m.layout, row.call);
    rows.push_back(std::move(row));
  }
  return rows;
}

Request validation_defaults(Request request, bool quick) {
  if (request.sizes.empty()) {
    request.sizes = quick ? std::vector<std::size_t>{8, 64 << 10}
                          : std::vector<std::size_t>{8, 512, 8 << 10, 128 << 10, 1 << 20, 16 << 20};
  }
  if (request.collectives.empty() && quick) request.collectives = {"allreduce"};
  if (request.types.empty() && !quick) request.types = {"double", "int32", "double_int"};
  return request;
}

void print_summary(const char* what, const ErrorSummary& s) {
  std::printf("%s: %d case(s), median |error| %.1f %%, 90th percentile %.1f %%", what, s.cases,
              s.median * 100, s.p90 * 100);
  if (s.oversubscribed > 0) std::printf(" (%d oversubscribed, not counted)", s.oversubscribed);
  std::printf("\n");
}

void print_spread(const char* what, const std::vector<PredictedRow>& rows) {
  const ErrorSummary spread = summarise_spread(rows);
  if (spread.cases == 0) return;
  std::printf(
      "%s: run to run (slowest / fastest run - 1), median %.1f %%, 90th percentile %.1f %%\n", what,
      spread.median * 100, spread.p90 * 100);
  const ErrorSummary floor = summarise_run_against_others(rows);
  std::printf(
      "%s: one run against the others' median (the floor under the model's error), median "
      "%.1f %%, 90th percentile %.1f %%\n",
      what, floor.median * 100, floor.p90 * 100);
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

ErrorSummary summary_of(std::vector<double> values, int oversubscribed) {
  ErrorSummary s;
  s.oversubscribed = oversubscribed;
  s.cases = static_cast<int>(values.size());
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  s.median = median_of(values);
  s.p90 = values[std::min(n - 1, static_cast<std::size_t>(0.9 * static_cast<double>(n)))];
  return s;
}

// One layout's runs merged case by case: the measurement is the median of
// the runs', the prediction the median run's (each run predicted from the
// probe taken just before it; of an even number, the upper middle one).
std::vector<PredictedRow> merged(const std::vector<std::vector<PredictedRow>>& runs) {
  std::vector<PredictedRow> rows;
  for (const std::vector<PredictedRow>& run : runs) {
    if (rows.empty()) rows = run;
  }
  for (PredictedRow& row : rows) {
    std::vector<const PredictedRow*> same;
    for (const std::vector<PredictedRow>& run : runs) {
      for (const PredictedRow& r : run) {
        if (r.call.collective == row.call.collective && r.call.type == row.call.type &&
            r.call.bytes_per_member == row.call.bytes_per_member && r.measured_seconds) {
          same.push_back(&r);
          break;
        }
      }
    }
    row.measured_runs.clear();
    row.predicted_runs.clear();
    for (const PredictedRow* r : same) {
      row.measured_runs.push_back(*r->measured_seconds);
      row.predicted_runs.push_back(r->hreduce.seconds);
    }
    std::sort(same.begin(), same.end(), [](const PredictedRow* a, const PredictedRow* b) {
      return a->hreduce.seconds < b->hreduce.seconds;
    });
    const PredictedRow& middle = *same[same.size() / 2];
    row.hreduce = middle.hreduce;
    row.flat = middle.flat;
    row.measured_seconds = median_of(row.measured_runs);
  }
  return rows;
}

void print_layout(const std::string& name, const std::vector<PredictedRow>& rows) {
  std::printf("\nlayout %s:\n", name.c_str());
  print_table(rows, true);
  print_summary("  this layout", summarise_errors(rows));
  print_spread("  this layout", rows);
}

void print_all(const std::vector<PredictedRow>& all) {
  std::printf("\n");
  print_summary("all layouts", summarise_errors(all));
  print_spread("all layouts", all);
}

}  // namespace

ErrorSummary summarise_errors(const std::vector<PredictedRow>& rows) {
  std::vector<double> errors;
  int oversubscribed = 0;
  for (const PredictedRow& r : rows) {
    if (!r.measured_seconds || *r.measured_seconds <= 0) continue;
    if (r.oversubscribed) {
      ++oversubscribed;
      continue;
    }
    errors.push_back(std::abs(r.hreduce.seconds / *r.measured_seconds - 1));
  }
  return summary_of(std::move(errors), oversubscribed);
}

ErrorSummary summarise_spread(const std::vector<PredictedRow>& rows) {
  std::vector<double> spreads;
  for (const PredictedRow& r : rows) {
    if (r.oversubscribed || r.measured_runs.size() < 2) continue;
    const auto [fastest, slowest] =
        std::minmax_element(r.measured_runs.begin(), r.measured_runs.end());
    if (*fastest > 0) spreads.push_back(*slowest / *fastest - 1);
  }
  return summary_of(std::move(spreads), 0);
}

ErrorSummary summarise_run_against_others(const std::vector<PredictedRow>& rows) {
  std::vector<double> errors;
  for (const PredictedRow& r : rows) {
    if (r.oversubscribed || r.measured_runs.size() < 2) continue;
    for (std::size_t i = 0; i < r.measured_runs.size(); ++i) {
      std::vector<double> others = r.measured_runs;
      others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
      const double reference = median_of(others);
      if (reference > 0) errors.push_back(std::abs(r.measured_runs[i] / reference - 1));
    }
  }
  return summary_of(std::move(errors), 0);
}

int validate(const Request& given, bool quick, const std::optional<std::string>& json_path,
             const std::optional<std::string>& layouts, int repeats) {
  if (repeats < 1) throw ArgumentError("predict --validate: --repeats must be at least 1");
  const Request request = validation_defaults(given, quick);
  const std::vector<Measured> plan = layouts ? parse_layouts(*layouts) : layouts_here();
  const std::string program = this_program();
  char dir_template[] = "/tmp/hreduce-validate-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) throw Error("predict --validate: cannot create a directory under /tmp");
  // Every layout once, then again, each run after a probe of its own: a
  // slow spell of a shared machine (a host busy elsewhere stalls this VM's
  // cores for milliseconds at a time, and moves them) falls on one run of
  // several layouts or on one probe, and the case's medians outvote it.
  std::vector<std::vector<std::vector<PredictedRow>>> runs(plan.size());
  int index = 0;
  std::string trips;  // each probe's cache-line round trip, to show its drift
  for (int run = 0; run < repeats; ++run) {
    const MachinePrices prices(probe_here(program, dir, run));
    const Topology node = topology_of(prices.topology());
    const auto& relations = prices.machine().core_to_core.by_relation;
    if (!relations.empty()) {
      char text[32];
      std::snprintf(text, sizeof text, "%s%.3f", trips.empty() ? "" : ", ",
                    relations.front().median_round_trip_seconds * 1e6);
      trips += text;
    }
    for (std::size_t i = 0; i < plan.size(); ++i) {
      runs[i].push_back(measure(plan[i], request, prices, node, program, dir, index++));
    }
  }
  std::vector<std::vector<PredictedRow>> by_layout;
  for (const auto& layout_runs : runs) by_layout.push_back(merged(layout_runs));
  std::vector<PredictedRow> all;
  probe::Json::Array records;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const std::vector<PredictedRow>& rows = by_layout[i];
    if (rows.empty()) continue;
    print_layout(
        to_string(plan[i].layout) + (plan[i].variant.empty() ? "" : ", " + plan[i].variant), rows);
    for (const PredictedRow& r : rows) records.push_back(to_json(r, plan[i].layout.members()));
    all.insert(all.end(), rows.begin(), rows.end());
  }
  print_all(all);
  std::printf("probes, one per run: cache-line round trip %s us\n", trips.c_str());
  std::printf("(files of this run: %s)\n", dir);
  if (json_path) {
    probe::write_text_file(*json_path, probe::Json(std::move(records)).dump() + "\n", "--json");
  }
  return all.empty() ? 1 : 0;
}

int validate_measured(const MachinePrices& prices, const std::string& measured_json,
                      const std::optional<std::string>& json_path) {
  const Topology node = topology_of(prices.topology());
  const int cores = std::max(1, node.count(hreduce::Level::core));
  std::map<std::string, std::vector<PredictedRow>> by_layout;  // "1x2x1, zero copy"
  std::vector<std::string> order;
  const probe::Json records = probe::Json::parse(read_file(measured_json));
  for (const probe::Json& r : records.as_array(measured_json)) {
    const std::string w = measured_json + ": record";
    PredictedRow row;
    row.call = {r.at("collective", w).as_string(w),
                static_cast<std::size_t>(r.at("bytes_per_member", w).as_number(w)),
                r.at("type", w).as_string(w)};
    row.layout = r.at("layout", w).as_string(w);
    const probe::Json* variant = r.find("variant");
    row.variant = variant != nullptr && !variant->is_null() ? variant->as_string(w) : "";
    row.measured_seconds = r.at("measured_seconds", w).as_number(w);
    if (const probe::Json* runs = r.find("measured_runs_seconds")) {
      for (const probe::Json& run : runs->as_array(w))
        row.measured_runs.push_back(run.as_number(w));
    }
    const Layout layout = parse_layout(row.layout);
    row.oversubscribed = layout.members() > cores;
    ModelSettings settings;
    settings.zero_copy = row.variant == "zero copy";
    row.hreduce = predict_hreduce(prices, node, layout, row.call, settings);
    row.flat = predict_flat_mpi(prices, layout, row.call);
    const std::string key = row.layout + (row.variant.empty() ? "" : ", " + row.variant);
    if (!by_layout.contains(key)) order.push_back(key);
    by_layout[key].push_back(std::move(row));
  }
  std::vector<PredictedRow> all;
  probe::Json::Array out;
  for (const std::string& key : order) {
    const std::vector<PredictedRow>& rows = by_layout[key];
    print_layout(key, rows);
    for (const PredictedRow& r : rows) {
      out.push_back(to_json(r, parse_layout(r.layout).members()));
    }
    all.insert(all.end(), rows.begin(), rows.end());
  }
  print_all(all);
  if (json_path) {
    probe::write_text_file(*json_path, probe::Json(std::move(out)).dump() + "\n", "--json");
  }
  return all.empty() ? 1 : 0;
}

}  // namespace hreduce::detail::model
