#include "src/model/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "src/compare/record.hpp"
#include "src/compare/text_output.hpp"

namespace hreduce::detail::model {

const FlatPrediction* best_flat(const PredictedRow& row) {
  const FlatPrediction* best = nullptr;
  for (const FlatPrediction& f : row.flat) {
    if (f.seconds && (best == nullptr || *f.seconds < *best->seconds)) best = &f;
  }
  return best;
}

std::vector<std::string> collectives_or_default(const Request& request) {
  if (!request.collectives.empty()) return request.collectives;
  return {"reduce", "allreduce", "reduce_scatter_block", "scan", "exscan"};
}
std::vector<std::size_t> sizes_or_default(const Request& request) {
  if (!request.sizes.empty()) return request.sizes;
  std::vector<std::size_t> sizes;
  for (std::size_t b = 8; b <= (std::size_t{16} << 20); b *= 8) sizes.push_back(b);
  return sizes;
}
std::vector<std::string> types_or_default(const Request& request) {
  if (!request.types.empty()) return request.types;
  return {"double"};
}

std::vector<PredictedRow> predict_rows(const MachinePrices& prices, const Topology& node,
                                       const Request& request) {
  std::vector<PredictedRow> rows;
  for (const std::string& collective : collectives_or_default(request)) {
    for (const std::string& type : types_or_default(request)) {
      for (std::size_t bytes : sizes_or_default(request)) {
        PredictedRow row;
        // Whole elements, at least one (as the bench rounds).
        const std::size_t element = element_bytes(type);
        row.call = {collective, std::max(element, bytes / element * element), type};
        row.layout = to_string(request.layout);
        row.hreduce = predict_hreduce(prices, node, request.layout, row.call, request.settings);
        row.flat = predict_flat_mpi(prices, request.layout, row.call);
        rows.push_back(std::move(row));
      }
    }
  }
  return rows;
}

probe::Json to_json(const PredictedRow& row, long long members) {
  using probe::Json;
  Json::Object levels;
  for (int l = 0; l < kLevelCount; ++l) {
    levels.emplace_back(level_name(static_cast<Level>(l)), Json(row.hreduce.levels[l]));
  }
  Json::Object flat;
  for (const FlatPrediction& f : row.flat) {
    flat.emplace_back(f.algorithm, f.seconds ? Json(*f.seconds) : Json());
  }
  Json::Object o = {{"collective", Json(row.call.collective)},
                    {"type", Json(row.call.type)},
                    {"layout", Json(row.layout)},
                    {"members", Json(static_cast<double>(members))},
                    {"bytes_per_member", Json(static_cast<double>(row.call.bytes_per_member))},
                    {"predicted_seconds", Json(row.hreduce.seconds)},
                    {"levels", Json(std::move(levels))},
                    {"dominant_term", Json(row.hreduce.dominant)},
                    {"decisions", Json(row.hreduce.decisions)},
                    {"flat_mpi", Json(std::move(flat))}};
  if (const FlatPrediction* best = best_flat(row)) {
    o.emplace_back("flat_mpi_best", Json(best->algorithm));
    o.emplace_back("flat_mpi_best_dominant_term", Json(best->dominant));
  }
  if (!row.variant.empty()) o.emplace_back("variant", Json(row.variant));
  if (row.measured_seconds) {
    o.emplace_back("measured_seconds", Json(*row.measured_seconds));
    o.emplace_back("error", Json(row.hreduce.seconds / *row.measured_seconds - 1));
    auto runs = [&](const char* name, const std::vector<double>& seconds) {
      if (seconds.empty()) return;
      Json::Array a;
      for (double r : seconds) a.emplace_back(r);
      o.emplace_back(name, Json(std::move(a)));
    };
    runs("measured_runs_seconds", row.measured_runs);
    runs("predicted_runs_seconds", row.predicted_runs);
    o.emplace_back("oversubscribed", Json(row.oversubscribed));
  }
  return Json(std::move(o));
}

namespace {

std::string microseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", seconds * 1e6);
  return text;
}

}  // namespace

void print_table(const std::vector<PredictedRow>& rows, bool measured) {
  std::printf("%-21s %-10s %9s %11s %9s %9s %9s %9s", "collective", "type", "bytes", "predicted",
              "process", "node", "nodes", "waiting");
  if (measured) std::printf(" %11s %7s", "measured", "error");
  std::printf(" %12s %-18s  %s\n", "flat MPI", "(best)", "dominated by");
  for (const PredictedRow& r : rows) {
    const Prediction& p = r.hreduce;
    std::printf("%-21s %-10s %9s %11s %9s %9s %9s %9s", r.call.collective.c_str(),
                r.call.type.c_str(), compare::human_bytes(r.call.bytes_per_member).c_str(),
                microseconds(p.seconds).c_str(), microseconds(p.levels[0]).c_str(),
                microseconds(p.levels[1]).c_str(), microseconds(p.levels[2]).c_str(),
                microseconds(p.levels[3]).c_str());
    if (measured) {
      const double error = r.measured_seconds ? p.seconds / *r.measured_seconds - 1 : NAN;
      std::printf(" %11s %+6.0f%%",
                  r.measured_seconds ? microseconds(*r.measured_seconds).c_str() : "-",
                  error * 100);
    }
    const FlatPrediction* best = best_flat(r);
    std::printf(" %12s %-18s  %s%s\n", best ? microseconds(*best->seconds).c_str() : "-",
                best ? best->algorithm.c_str() : "", p.dominant.c_str(),
                r.oversubscribed ? " [oversubscribed]" : "");
  }
  std::printf(
      "(times in microseconds per call; process/node/nodes/waiting: inside_process, "
      "node_segment, between_nodes, waiting)\n");
}

void write_plot(const std::string& path, const std::vector<PredictedRow>& rows, long long members,
                const std::string& title) {
  std::vector<compare::Record> records;
  auto add = [&](const PredictedRow& r, const std::string& who, double seconds) {
    compare::Record rec;
    rec.collective = r.call.collective;
    rec.implementation = who;
    rec.type = r.call.type;
    rec.op = op_class_of(r.call.type);
    rec.members = static_cast<int>(std::min<long long>(members, 1 << 30));
    rec.bytes_per_member = r.call.bytes_per_member;
    rec.median_seconds = seconds;
    // As the bench counts: every member's input and output over the time.
    rec.gbps = 2.0 * static_cast<double>(members) * static_cast<double>(r.call.bytes_per_member) /
               seconds * 1e-9;
    rec.samples = 1;
    records.push_back(rec);
  };
  for (const PredictedRow& r : rows) {
    add(r, "hreduce (predicted)", r.hreduce.seconds);
    if (r.measured_seconds) add(r, "hreduce (measured)", *r.measured_seconds);
    for (const FlatPrediction& f : r.flat) {
      if (f.seconds) add(r, "mpi " + f.algorithm + " (predicted)", *f.seconds);
    }
  }
  compare::write_svg(path, records, title);
}

}  // namespace hreduce::detail::model
