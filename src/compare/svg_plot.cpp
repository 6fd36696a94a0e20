// `hreduce bench --plot`: GB/s against bytes per member as a standalone SVG,
// written as text so the bench needs no plotting library. Both axes are
// logarithmic because sizes span many powers of two and bandwidth spans
// decades between latency-bound and memory-bound sizes.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "hreduce/error.hpp"
#include "src/compare/record.hpp"
#include "src/compare/svg_levels.hpp"
#include "src/compare/svg_text.hpp"
#include "src/compare/text_output.hpp"

namespace hreduce::detail::compare {
namespace {

// Layout in SVG user units (pixels at 100 %).
constexpr double kMargin = 20;
constexpr double kTitleBaseline = 34;
constexpr double kLegendTop = 52;
constexpr double kLegendRowHeight = 20;
constexpr double kLegendItemWidth = 190;
constexpr double kPanelWidth = 420;
constexpr double kPanelHeight = 300;
// The plot area inside a panel leaves room for the panel title above and
// for tick labels and axis names to the left and below.
constexpr double kPlotLeft = 64;
constexpr double kPlotRight = 14;
constexpr double kPlotTop = 32;
constexpr double kPlotBottom = 50;
// Keeps markers at the extremes of the data off the frame.
constexpr double kInset = 8;

constexpr const char* kSubject = "hreduce";

struct Point {
  std::size_t bytes;
  double gbps;
};

struct Series {
  std::string implementation;
  std::vector<Point> points;
};

struct Panel {
  std::string collective, type;
  int members;
  std::string title;
  std::vector<Series> series;
};

struct Style {
  const char* colour;
  double width;
  const char* dash;  // "" for a solid line
};

// --- Text ------------------------------------------------------------------

std::string format_gbps(double gbps) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", gbps);
  return text;
}

// --- Grouping --------------------------------------------------------------

// Log axes cannot place zero, and a failed or unmeasured point (gbps <= 0,
// NaN) would only distort the scale.
bool plottable(const Record& r) {
  return r.bytes_per_member > 0 && std::isfinite(r.gbps) && r.gbps > 0;
}

bool members_vary(const std::vector<Record>& records) {
  const Record* first = nullptr;
  for (const Record& r : records) {
    if (!plottable(r)) continue;
    if (first == nullptr) first = &r;
    if (r.members != first->members) return true;
  }
  return false;
}

std::string panel_title(const Record& r, bool with_members) {
  std::string title = r.collective + " (" + r.type + ")";
  if (with_members) {
    title += ", " + std::to_string(r.members) + (r.members == 1 ? " member" : " members");
  }
  return title;
}

Panel& panel_for(std::vector<Panel>& panels, const Record& r, bool by_members) {
  const int members = by_members ? r.members : 0;
  for (Panel& p : panels) {
    if (p.collective == r.collective && p.type == r.type && p.members == members) return p;
  }
  panels.push_back(Panel{r.collective, r.type, members, panel_title(r, by_members), {}});
  return panels.back();
}

Series& series_for(Panel& panel, const std::string& implementation) {
  for (Series& s : panel.series) {
    if (s.implementation == implementation) return s;
  }
  panel.series.push_back(Series{implementation, {}});
  return panel.series.back();
}

// Panels and their lines in order of first appearance, so the plot follows
// the order the bench ran in.
std::vector<Panel> group_into_panels(const std::vector<Record>& records) {
  const bool by_members = members_vary(records);
  std::vector<Panel> panels;
  for (const Record& r : records) {
    if (!plottable(r)) continue;
    series_for(panel_for(panels, r, by_members), r.implementation)
        .points.push_back(Point{r.bytes_per_member, r.gbps});
  }
  for (Panel& panel : panels) {
    for (Series& s : panel.series) {
      std::stable_sort(s.points.begin(), s.points.end(),
                       [](const Point& a, const Point& b) { return a.bytes < b.bytes; });
    }
    // The subject of the comparison is drawn last, on top of the others.
    std::stable_partition(panel.series.begin(), panel.series.end(),
                          [](const Series& s) { return s.implementation != kSubject; });
  }
  return panels;
}

std::vector<std::string> implementations_of(const std::vector<Record>& records) {
  std::vector<std::string> names;
  for (const Record& r : records) {
    if (!plottable(r)) continue;
    if (std::find(names.begin(), names.end(), r.implementation) == names.end()) {
      names.push_back(r.implementation);
    }
  }
  return names;
}

// --- Styles ----------------------------------------------------------------

// Fixed per name, so the same implementation has the same colour in every
// plot and runs can be compared side by side.
std::map<std::string, Style> styles_for(const std::vector<std::string>& implementations) {
  static const std::map<std::string, Style> kKnown = {
      {"hreduce", {"#d62728", 2.8, ""}},       {"openmp_reduction", {"#1f77b4", 1.6, ""}},
      {"openmp_sliced", {"#2ca02c", 1.6, ""}}, {"tbb", {"#ff7f0e", 1.6, ""}},
      {"limit", {"#444444", 1.6, "6 4"}},      {"mpi_flat", {"#9467bd", 1.6, ""}},
  };
  static const char* const kFallback[] = {"#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
  constexpr std::size_t kFallbackCount = sizeof kFallback / sizeof kFallback[0];
  std::map<std::string, Style> styles;
  std::size_t unknown = 0;
  for (const std::string& name : implementations) {
    const auto known = kKnown.find(name);
    styles[name] = known != kKnown.end() ? known->second
                                         : Style{kFallback[unknown++ % kFallbackCount], 1.6, ""};
  }
  return styles;
}

std::string stroke_attributes(const Style& style) {
  std::string attributes =
      "stroke=\"" + std::string(style.colour) + "\" stroke-width=\"" + px(style.width) + "\"";
  if (*style.dash != '\0') attributes += " stroke-dasharray=\"" + std::string(style.dash) + "\"";
  return attributes;
}

// --- Scales ----------------------------------------------------------------

// Whole powers [lo, hi] of the axis base around the data, so the axis
// starts and ends on a labelled power.
struct PowerRange {
  int lo, hi;
};

PowerRange power_range(double min_log, double max_log) {
  // The slack absorbs rounding in log2/log10 of exact powers.
  constexpr double kSlack = 1e-9;
  PowerRange range{static_cast<int>(std::floor(min_log + kSlack)),
                   static_cast<int>(std::ceil(max_log - kSlack))};
  // A single value gets a power either side instead of sitting on the frame.
  if (range.hi <= range.lo) {
    range.lo -= 1;
    range.hi = range.lo + 2;
  }
  return range;
}

// Maps a log value in [range.lo, range.hi] onto pixels [from, to]; `to` may
// be below `from`, as for the y axis.
struct LogScale {
  PowerRange range;
  double from, to;

  double pixel(double log_value) const {
    return from + (log_value - range.lo) / (range.hi - range.lo) * (to - from);
  }
};

// Steps of 1, 2, 5, 10... powers of two keep labels round (32 B, 1 KiB,
// 32 KiB, 1 MiB) while leaving room for each label.
std::vector<int> byte_tick_exponents(PowerRange range) {
  constexpr int kMaxTicks = 7;
  int step = 1;
  for (const int candidate : {1, 2, 5, 10, 20}) {
    step = candidate;
    if ((range.hi - range.lo) / step + 1 <= kMaxTicks) break;
  }
  std::vector<int> exponents;
  for (int e = range.lo; e <= range.hi; ++e) {
    if (e >= 0 && e < 64 && e % step == 0) exponents.push_back(e);
  }
  return exponents;
}

// %g gives 0.01, 0.1, 1, 10, 100 and switches to 1e+06 only where plain
// digits would grow too wide for the margin.
std::string gbps_tick_label(int mantissa, int exponent) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", mantissa * std::pow(10.0, exponent));
  return text;
}

// --- Drawing ---------------------------------------------------------------

struct PlotArea {
  double left, top, right, bottom;
};

void draw_x_axis(std::string& out, const LogScale& x, const PlotArea& area) {
  for (const int e : byte_tick_exponents(x.range)) {
    const double at = x.pixel(e);
    line(out, at, area.top, at, area.bottom, "class=\"grid\" stroke=\"#e0e0e0\"");
    line(out, at, area.bottom, at, area.bottom + 4, "stroke=\"#333\"");
    text(out, at, area.bottom + 17, human_bytes(std::size_t{1} << e),
         "class=\"tick\" text-anchor=\"middle\"");
  }
  text(out, (area.left + area.right) / 2, area.bottom + 38, "bytes per member",
       "class=\"axis-name\" text-anchor=\"middle\"");
}

void draw_y_axis(std::string& out, const LogScale& y, const PlotArea& area) {
  const int decades = y.range.hi - y.range.lo;
  // Within a few decades, 2..9 lines help read values off; more would clutter.
  if (decades <= 3) {
    for (int e = y.range.lo; e < y.range.hi; ++e) {
      for (int m = 2; m <= 9; ++m) {
        const double at = y.pixel(e + std::log10(m));
        line(out, area.left, at, area.right, at, "class=\"grid minor\" stroke=\"#f0f0f0\"");
        if (decades <= 1 && (m == 2 || m == 5)) {
          text(out, area.left - 6, at + 4, gbps_tick_label(m, e),
               "class=\"tick minor\" text-anchor=\"end\" fill=\"#777\"");
        }
      }
    }
  }
  const int step = (decades + 7) / 8;
  for (int e = y.range.lo; e <= y.range.hi; e += step) {
    const double at = y.pixel(e);
    line(out, area.left, at, area.right, at, "class=\"grid\" stroke=\"#d0d0d0\"");
    line(out, area.left - 4, at, area.left, at, "stroke=\"#333\"");
    text(out, area.left - 6, at + 4, gbps_tick_label(1, e), "class=\"tick\" text-anchor=\"end\"");
  }
  const double middle = (area.top + area.bottom) / 2;
  text(out, area.left - 48, middle, "GB/s",
       "class=\"axis-name\" text-anchor=\"middle\" transform=\"rotate(-90 " + px(area.left - 48) +
           " " + px(middle) + ")\"");
}

void draw_series(std::string& out, const Series& series, const Style& style, const LogScale& x,
                 const LogScale& y) {
  const auto x_of = [&](const Point& p) {
    return px(x.pixel(std::log2(static_cast<double>(p.bytes))));
  };
  const auto y_of = [&](const Point& p) { return px(y.pixel(std::log10(p.gbps))); };
  const std::string name = escape_xml(series.implementation);
  std::string points;
  for (const Point& p : series.points) {
    if (!points.empty()) points += ' ';
    points += x_of(p) + "," + y_of(p);
  }
  out += "<polyline class=\"line\" data-implementation=\"" + name + "\" points=\"" + points +
         "\" fill=\"none\" " + stroke_attributes(style) + " stroke-linejoin=\"round\"/>\n";
  const std::string radius = px(style.width + 1.2);
  for (const Point& p : series.points) {
    out += "<circle class=\"marker\" data-implementation=\"" + name + "\" cx=\"" + x_of(p) +
           "\" cy=\"" + y_of(p) + "\" r=\"" + radius + "\" fill=\"" + style.colour + "\">";
    // A browser shows the title on hover: the value without reading the axes.
    out += "<title>" + name + ": " + escape_xml(human_bytes(p.bytes)) + ", " + format_gbps(p.gbps) +
           " GB/s</title></circle>\n";
  }
}

LogScale x_scale_of(const Panel& panel, const PlotArea& area) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const Series& s : panel.series) {
    for (const Point& p : s.points) {
      lo = std::min(lo, std::log2(static_cast<double>(p.bytes)));
      hi = std::max(hi, std::log2(static_cast<double>(p.bytes)));
    }
  }
  return LogScale{power_range(lo, hi), area.left + kInset, area.right - kInset};
}

LogScale y_scale_of(const Panel& panel, const PlotArea& area) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const Series& s : panel.series) {
    for (const Point& p : s.points) {
      lo = std::min(lo, std::log10(p.gbps));
      hi = std::max(hi, std::log10(p.gbps));
    }
  }
  return LogScale{power_range(lo, hi), area.bottom - kInset, area.top + kInset};
}

void draw_panel(std::string& out, const Panel& panel, double left, double top,
                const std::map<std::string, Style>& styles) {
  out += "<g class=\"panel\" transform=\"translate(" + px(left) + " " + px(top) + ")\">\n";
  const PlotArea area{kPlotLeft, kPlotTop, kPanelWidth - kPlotRight, kPanelHeight - kPlotBottom};
  text(out, (area.left + area.right) / 2, area.top - 12, panel.title,
       "class=\"panel-title\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\"");
  out += "<rect x=\"" + px(area.left) + "\" y=\"" + px(area.top) + "\" width=\"" +
         px(area.right - area.left) + "\" height=\"" + px(area.bottom - area.top) +
         "\" fill=\"#fcfcfc\" stroke=\"none\"/>\n";
  const LogScale x = x_scale_of(panel, area);
  const LogScale y = y_scale_of(panel, area);
  draw_y_axis(out, y, area);
  draw_x_axis(out, x, area);
  out += "<rect x=\"" + px(area.left) + "\" y=\"" + px(area.top) + "\" width=\"" +
         px(area.right - area.left) + "\" height=\"" + px(area.bottom - area.top) +
         "\" fill=\"none\" stroke=\"#333\"/>\n";
  for (const Series& s : panel.series) draw_series(out, s, styles.at(s.implementation), x, y);
  out += "</g>\n";
}

std::size_t legend_entries_per_row(double width) {
  return std::max<std::size_t>(1,
                               static_cast<std::size_t>((width - 2 * kMargin) / kLegendItemWidth));
}

int legend_rows(std::size_t entries, double width) {
  const std::size_t per_row = legend_entries_per_row(width);
  return static_cast<int>((entries + per_row - 1) / per_row);
}

// One legend for the whole figure: every panel uses the same styles.
void draw_legend(std::string& out, const std::vector<std::string>& implementations,
                 const std::map<std::string, Style>& styles, double width) {
  const std::size_t per_row = legend_entries_per_row(width);
  out += "<g class=\"legend\">\n";
  for (std::size_t i = 0; i < implementations.size(); ++i) {
    const Style& style = styles.at(implementations[i]);
    const double left = kMargin + static_cast<double>(i % per_row) * kLegendItemWidth;
    const double middle = kLegendTop + static_cast<double>(i / per_row) * kLegendRowHeight + 8;
    line(out, left, middle, left + 30, middle, stroke_attributes(style));
    out += "<circle cx=\"" + px(left + 15) + "\" cy=\"" + px(middle) + "\" r=\"" +
           px(style.width + 1.2) + "\" fill=\"" + style.colour + "\"/>\n";
    text(out, left + 38, middle + 4, implementations[i], "class=\"legend-entry\"");
  }
  out += "</g>\n";
}

int columns_for(std::size_t panels) {
  if (panels <= 1) return 1;
  return panels <= 4 ? 2 : 3;
}

}  // namespace

std::string to_svg(const std::vector<Record>& records, const std::string& title) {
  const std::vector<Panel> panels = group_into_panels(records);
  const std::vector<std::string> implementations = implementations_of(records);
  const std::map<std::string, Style> styles = styles_for(implementations);

  const int columns = columns_for(panels.size());
  const int rows = static_cast<int>((panels.size() + columns - 1) / columns);
  const double width = 2 * kMargin + columns * kPanelWidth;
  const double panels_top =
      kLegendTop + legend_rows(implementations.size(), width) * kLegendRowHeight + 8;
  // An empty figure still gets a line to say why it is empty.
  const double levels_top = panels_top + std::max(rows * kPanelHeight, 40.0);
  const double height = levels_top + level_section_height(records, columns) + kMargin;

  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + px(width) +
         "\" height=\"" + px(height) + "\" viewBox=\"0 0 " + px(width) + " " + px(height) +
         "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\" fill=\"#222\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  text(out, width / 2, kTitleBaseline, title,
       "class=\"title\" text-anchor=\"middle\" font-size=\"18\" font-weight=\"bold\"");
  draw_legend(out, implementations, styles, width);
  if (panels.empty()) {
    text(out, width / 2, panels_top + 24, "no measurements with a positive bandwidth",
         "class=\"empty\" text-anchor=\"middle\" fill=\"#777\"");
  }
  for (std::size_t i = 0; i < panels.size(); ++i) {
    const double left = kMargin + static_cast<double>(i % columns) * kPanelWidth;
    const double top = panels_top + static_cast<double>(i / columns) * kPanelHeight;
    draw_panel(out, panels[i], left, top, styles);
  }
  draw_level_section(out, records, levels_top, columns);
  out += "</svg>\n";
  return out;
}

void write_svg(const std::string& path, const std::vector<Record>& records,
               const std::string& title) {
  write_text_file(path, to_svg(records, title), "--plot");
}

}  // namespace hreduce::detail::compare
