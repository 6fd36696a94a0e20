// The SVG text both plots of `hreduce bench --plot` write: escaping, pixel
// coordinates, text and lines. Plain strings, so the bench needs no
// plotting library.
#pragma once

#include <cstdio>
#include <string>

namespace hreduce::detail::compare {

inline std::string escape_xml(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters even when escaped.
        out += static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' ? ' ' : c;
    }
  }
  return out;
}

// Coordinates: a tenth of a pixel is finer than any screen shows.
inline std::string px(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

inline void text(std::string& out, double x, double y, const std::string& content,
                 const std::string& attributes = "") {
  out += "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\"";
  if (!attributes.empty()) out += " " + attributes;
  out += ">" + escape_xml(content) + "</text>\n";
}

inline void line(std::string& out, double x1, double y1, double x2, double y2,
                 const std::string& attributes) {
  out += "<line x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" + px(x2) + "\" y2=\"" + px(y2) +
         "\" " + attributes + "/>\n";
}

inline void rect(std::string& out, double x, double y, double width, double height,
                 const std::string& attributes) {
  out += "<rect x=\"" + px(x) + "\" y=\"" + px(y) + "\" width=\"" + px(width) + "\" height=\"" +
         px(height) + "\" " + attributes + "/>\n";
}

}  // namespace hreduce::detail::compare
