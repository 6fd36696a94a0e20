// Heatmaps as standalone SVG text, in the style of src/compare/svg_plot.cpp:
// no plotting library, fixed layout in user units.
#include "src/probe/heatmap_svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace hreduce::detail::probe {
namespace {

constexpr double kPanelWidth = 400;
constexpr double kPanelHeight = 430;
constexpr double kGridLeft = 44;
constexpr double kGridTop = 52;
constexpr double kGridSide = 320;
constexpr int kColumns = 3;
constexpr int kLabelledCells = 16;  // more cells than this per side: no numbers in them

using Cells = std::vector<std::vector<std::optional<double>>>;

struct Heatmap {
  std::string title, unit;
  Cells cells;
  bool higher_is_better;  // bandwidth: dark is fast; latency: dark is slow
};

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

std::string escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    out += c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : std::string(1, c);
  }
  return out;
}

// From pale yellow (0) to dark blue (1).
std::string colour(double t) {
  t = std::clamp(t, 0.0, 1.0);
  const int r = static_cast<int>(255 - t * (255 - 8));
  const int g = static_cast<int>(247 - t * (247 - 48));
  const int b = static_cast<int>(188 - t * (188 - 107));
  char text[16];
  std::snprintf(text, sizeof text, "#%02x%02x%02x", r, g, b);
  return text;
}

std::string cell_text(double value) {
  return format(value >= 100 ? "%.0f" : value >= 10 ? "%.1f" : "%.2f", value);
}

std::string panel(const Heatmap& map, double x, double y) {
  const int n = static_cast<int>(map.cells.size());
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& row : map.cells) {
    for (const auto& v : row) {
      if (v) lo = std::min(lo, *v), hi = std::max(hi, *v);
    }
  }
  const double side = kGridSide / std::max(n, 1);
  std::string out =
      "<g transform=\"translate(" + format("%.0f", x) + "," + format("%.0f", y) + ")\">\n";
  out += "<text x=\"" + format("%.0f", kGridLeft) +
         "\" y=\"24\" font-size=\"14\" font-weight=\"bold\">" + escape(map.title) + "</text>\n";
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < static_cast<int>(map.cells[i].size()); ++j) {
      const auto& v = map.cells[i][j];
      const double t = !v || hi <= lo ? 0.5 : (*v - lo) / (hi - lo);
      const double cx = kGridLeft + j * side, cy = kGridTop + i * side;
      out += "<rect x=\"" + format("%.2f", cx) + "\" y=\"" + format("%.2f", cy) + "\" width=\"" +
             format("%.2f", side) + "\" height=\"" + format("%.2f", side) + "\" fill=\"" +
             (v ? colour(t) : std::string("#d9d9d9")) + "\"><title>" + std::to_string(i) + " → " +
             std::to_string(j) + ": " +
             (v ? cell_text(*v) + " " + map.unit : std::string("not measured")) +
             "</title></rect>\n";
      if (v && n <= kLabelledCells) {
        out += "<text x=\"" + format("%.2f", cx + side / 2) + "\" y=\"" +
               format("%.2f", cy + side / 2 + 4) + "\" font-size=\"" +
               format("%.0f", std::min(12.0, side / 3.2)) + "\" text-anchor=\"middle\" fill=\"" +
               (t > 0.55 ? "white" : "black") + "\">" + cell_text(*v) + "</text>\n";
      }
    }
    if (n <= 2 * kLabelledCells) {
      out += "<text x=\"" + format("%.0f", kGridLeft - 4) + "\" y=\"" +
             format("%.2f", kGridTop + (i + 0.5) * side + 4) +
             "\" font-size=\"10\" text-anchor=\"end\">" + std::to_string(i) + "</text>\n";
      out += "<text x=\"" + format("%.2f", kGridLeft + (i + 0.5) * side) + "\" y=\"" +
             format("%.0f", kGridTop - 4) + "\" font-size=\"10\" text-anchor=\"middle\">" +
             std::to_string(i) + "</text>\n";
    }
  }
  const std::string range = std::isfinite(lo)
                                ? cell_text(lo) + " – " + cell_text(hi) + " " + map.unit
                                : "nothing measured";
  out += "<text x=\"" + format("%.0f", kGridLeft) + "\" y=\"" +
         format("%.0f", kGridTop + kGridSide + 22) + "\" font-size=\"11\">" + escape(range) + " (" +
         (map.higher_is_better ? "dark: faster" : "dark: slower") + ")</text>\n";
  return out + "</g>\n";
}

Cells dense(const NumaMatrix& m, double scale) {
  Cells cells;
  for (const auto& row : m) {
    cells.emplace_back();
    for (double v : row)
      cells.back().push_back(v > 0 ? std::optional<double>(v * scale) : std::nullopt);
  }
  return cells;
}

Cells round_trips(const MachineDescription& m) {
  const std::size_t n = m.topology.pus.size();
  Cells cells(n, std::vector<std::optional<double>>(n));
  for (const PairLatency& p : m.core_to_core.pairs) {
    cells[p.a][p.b] = cells[p.b][p.a] = p.round_trip_seconds * 1e9;
  }
  return cells;
}

std::vector<Heatmap> heatmaps(const MachineDescription& m) {
  std::vector<Heatmap> maps = {{"cache-line round trip, PU × PU", "ns", round_trips(m), false}};
  const struct {
    const char* who;
    const MemoryKernels* kernels;
  } sides[] = {{"1 thread", &m.memory.one_thread}, {"a node's cores", &m.memory.node_threads}};
  for (const auto& side : sides) {
    maps.push_back({std::string("read, ") + side.who + ", NUMA → memory", "GB/s",
                    dense(side.kernels->read, 1e-9), true});
    maps.push_back({std::string("copy, ") + side.who + ", NUMA → memory", "GB/s",
                    dense(side.kernels->copy, 1e-9), true});
    maps.push_back({std::string("fold, ") + side.who + ", NUMA → memory", "GB/s",
                    dense(side.kernels->fold, 1e-9), true});
  }
  if (m.mpi) {
    const std::size_t p = static_cast<std::size_t>(m.mpi->processes);
    Cells latency(p, std::vector<std::optional<double>>(p)), bandwidth = latency;
    for (const MpiPair& pair : m.mpi->pairs) {
      latency[pair.a][pair.b] = latency[pair.b][pair.a] = pair.latency_seconds * 1e6;
      bandwidth[pair.a][pair.b] = bandwidth[pair.b][pair.a] = pair.bytes_per_second * 1e-9;
    }
    maps.push_back({"MPI latency, rank × rank", "µs", latency, false});
    maps.push_back({"MPI bandwidth, rank × rank", "GB/s", bandwidth, true});
  }
  return maps;
}

}  // namespace

std::string heatmaps_svg(const MachineDescription& machine) {
  const std::vector<Heatmap> maps = heatmaps(machine);
  const int rows = (static_cast<int>(maps.size()) + kColumns - 1) / kColumns;
  const double width = kColumns * kPanelWidth, height = 50 + rows * kPanelHeight;
  std::string out =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"" +
      format("%.0f", width) + "\" height=\"" + format("%.0f", height) +
      "\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out += "<text x=\"20\" y=\"32\" font-size=\"18\" font-weight=\"bold\">hreduce probe: " +
         escape(machine.host) + " (" + escape(machine.topology.source) + "), " +
         escape(machine.date) + "</text>\n";
  for (std::size_t i = 0; i < maps.size(); ++i) {
    out += panel(maps[i], static_cast<double>(i % kColumns) * kPanelWidth,
                 50 + static_cast<double>(i / kColumns) * kPanelHeight);
  }
  return out + "</svg>\n";
}

}  // namespace hreduce::detail::probe
