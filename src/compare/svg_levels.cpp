// `hreduce bench --breakdown --plot`: below the GB/s panels, where each
// call's time went. One panel per collective and type, one bar per size,
// stacked by level (src/common/level_clock.hpp) as shares of the call, the
// call's time written under the bar: sizes span microseconds to
// milliseconds, which one linear axis of seconds could not show together.
#include <algorithm>
#include <string>
#include <vector>

#include "src/compare/record.hpp"
#include "src/compare/svg_levels.hpp"
#include "src/compare/svg_text.hpp"
#include "src/compare/text_output.hpp"

namespace hreduce::detail::compare {
namespace {

constexpr double kSectionHeader = 64;  // the section's title and its legend
constexpr double kPanelWidth = 420;
constexpr double kPanelHeight = 300;
constexpr double kPlotLeft = 64, kPlotRight = 14, kPlotTop = 32, kPlotBottom = 52;

struct Bar {
  std::size_t bytes;
  std::vector<LevelTime> levels;
  double total() const {
    double sum = 0;
    for (const LevelTime& l : levels) sum += l.seconds;
    return sum;
  }
};

struct LevelPanel {
  std::string collective, type, implementation;
  int members;
  std::vector<Bar> bars;
};

// In level order; the waiting level grey, as idle time.
const char* colour_of(std::size_t level) {
  static const char* const kColours[] = {"#1f77b4", "#2ca02c", "#9467bd",
                                         "#b0b0b0", "#ff7f0e", "#8c564b"};
  return kColours[level % (sizeof kColours / sizeof kColours[0])];
}

bool drawable(const Record& r) {
  if (r.levels.empty()) return false;
  double sum = 0;
  for (const LevelTime& l : r.levels) sum += l.seconds;
  return sum > 0;
}

std::vector<LevelPanel> level_panels(const std::vector<Record>& records) {
  std::vector<LevelPanel> panels;
  for (const Record& r : records) {
    if (!drawable(r)) continue;
    auto same = [&](const LevelPanel& p) {
      return p.collective == r.collective && p.type == r.type &&
             p.implementation == r.implementation && p.members == r.members;
    };
    auto it = std::find_if(panels.begin(), panels.end(), same);
    if (it == panels.end()) {
      panels.push_back({r.collective, r.type, r.implementation, r.members, {}});
      it = panels.end() - 1;
    }
    it->bars.push_back({r.bytes_per_member, r.levels});
  }
  for (LevelPanel& p : panels) {
    std::stable_sort(p.bars.begin(), p.bars.end(),
                     [](const Bar& a, const Bar& b) { return a.bytes < b.bytes; });
  }
  return panels;
}

std::string microseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g µs", seconds * 1e6);
  return text;
}

std::string panel_title(const LevelPanel& p) {
  std::string title = p.collective + " (" + p.type + "), " + std::to_string(p.members) +
                      (p.members == 1 ? " member" : " members");
  if (p.implementation != "hreduce") title += ", " + p.implementation;
  return title;
}

void draw_share_axis(std::string& out, double left, double right, double top, double bottom) {
  for (int percent = 0; percent <= 100; percent += 25) {
    const double at = bottom - (bottom - top) * percent / 100.0;
    line(out, left, at, right, at, "class=\"grid\" stroke=\"#e0e0e0\"");
    text(out, left - 6, at + 4, std::to_string(percent) + "%",
         "class=\"tick\" text-anchor=\"end\"");
  }
  const double middle = (top + bottom) / 2;
  text(out, left - 48, middle, "share of the call",
       "class=\"axis-name\" text-anchor=\"middle\" transform=\"rotate(-90 " + px(left - 48) + " " +
           px(middle) + ")\"");
}

// One bar: the levels bottom up in level order, each its share of the call.
void draw_bar(std::string& out, const LevelPanel& panel, const Bar& bar, double x, double width,
              double top, double bottom) {
  const double total = bar.total();
  double y = bottom;
  for (std::size_t i = 0; i < bar.levels.size(); ++i) {
    const LevelTime& level = bar.levels[i];
    if (level.seconds <= 0) continue;  // a level the call never entered
    const double height = (bottom - top) * level.seconds / total;
    y -= height;
    out += "<rect class=\"level\" data-level=\"" + escape_xml(level.level) + "\" x=\"" + px(x) +
           "\" y=\"" + px(y) + "\" width=\"" + px(width) + "\" height=\"" + px(height) +
           "\" fill=\"" + colour_of(i) + "\"><title>" +
           escape_xml(panel.collective + " " + human_bytes(bar.bytes) + ": " + level.level + " " +
                      microseconds(level.seconds)) +
           "</title></rect>\n";
  }
  text(out, x + width / 2, bottom + 14, human_bytes(bar.bytes),
       "class=\"tick\" text-anchor=\"middle\" font-size=\"10\"");
  text(out, x + width / 2, bottom + 27, microseconds(total),
       "class=\"bar-total\" text-anchor=\"middle\" font-size=\"9\" fill=\"#555\"");
}

void draw_level_panel(std::string& out, const LevelPanel& panel, double left, double top) {
  out += "<g class=\"level-panel\" transform=\"translate(" + px(left) + " " + px(top) + ")\">\n";
  const double l = kPlotLeft, r = kPanelWidth - kPlotRight;
  const double t = kPlotTop, b = kPanelHeight - kPlotBottom;
  text(out, (l + r) / 2, t - 12, panel_title(panel),
       "class=\"level-panel-title\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\"");
  draw_share_axis(out, l, r, t, b);
  const double slot = (r - l) / static_cast<double>(std::max<std::size_t>(1, panel.bars.size()));
  for (std::size_t i = 0; i < panel.bars.size(); ++i) {
    draw_bar(out, panel, panel.bars[i], l + slot * (i + 0.15), slot * 0.7, t, b);
  }
  rect(out, l, t, r - l, b - t, "fill=\"none\" stroke=\"#333\"");
  out += "</g>\n";
}

void draw_level_legend(std::string& out, const std::vector<LevelPanel>& panels, double top) {
  const std::vector<LevelTime>& levels = panels.front().bars.front().levels;
  out += "<g class=\"level-legend\">\n";
  for (std::size_t i = 0; i < levels.size(); ++i) {
    // Four names fit the width of a one-panel figure.
    const double left = 20 + static_cast<double>(i) * 112;
    rect(out, left, top + 30, 18, 12, "fill=\"" + std::string(colour_of(i)) + "\"");
    text(out, left + 22, top + 41, levels[i].level,
         "class=\"level-legend-entry\" font-size=\"11\"");
  }
  out += "</g>\n";
}

}  // namespace

double level_section_height(const std::vector<Record>& records, int columns) {
  const std::size_t panels = level_panels(records).size();
  if (panels == 0) return 0;
  const std::size_t rows = (panels + columns - 1) / columns;
  return kSectionHeader + static_cast<double>(rows) * kPanelHeight;
}

void draw_level_section(std::string& out, const std::vector<Record>& records, double top,
                        int columns) {
  const std::vector<LevelPanel> panels = level_panels(records);
  if (panels.empty()) return;
  text(out, 20, top + 16, "time per level: shares of one call, its time below the bar",
       "class=\"level-title\" font-size=\"14\" font-weight=\"bold\"");
  draw_level_legend(out, panels, top);
  for (std::size_t i = 0; i < panels.size(); ++i) {
    const double left = 20 + static_cast<double>(i % columns) * kPanelWidth;
    const double panel_top = top + kSectionHeader + static_cast<double>(i / columns) * kPanelHeight;
    draw_level_panel(out, panels[i], left, panel_top);
  }
}

}  // namespace hreduce::detail::compare
