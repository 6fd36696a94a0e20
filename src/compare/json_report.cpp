// `hreduce bench --json`: the records as a JSON array, one object per line,
// so the file both parses as a whole and diffs line by line between runs.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "hreduce/error.hpp"
#include "src/compare/record.hpp"
#include "src/compare/text_output.hpp"

namespace hreduce::detail::compare {
namespace {

void append_escaped(std::string& out, const std::string& text) {
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        // Bytes >= 0x80 are passed through: names are UTF-8 already.
        if (static_cast<unsigned char>(c) < 0x20) {
          char escape[8];
          std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(c));
          out += escape;
        } else {
          out += c;
        }
    }
  }
}

// JSON has no NaN or infinity; null keeps the file loadable by any parser
// and still says "no value" to the reader.
std::string number(double value, const char* format) {
  if (!std::isfinite(value)) return "null";
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

void append_string_field(std::string& out, const char* key, const std::string& value) {
  out += '"';
  out += key;
  out += "\": \"";
  append_escaped(out, value);
  out += '"';
}

void append_raw_field(std::string& out, const char* key, const std::string& value) {
  out += '"';
  out += key;
  out += "\": ";
  out += value;
}

// {"inside_process": 1.2e-07, ...}, in level order.
std::string levels_object(const std::vector<LevelTime>& levels) {
  std::string out = "{";
  for (const LevelTime& l : levels) {
    if (out.size() > 1) out += ", ";
    append_raw_field(out, l.level.c_str(), number(l.seconds, "%.9g"));
  }
  return out + "}";
}

std::string object_of(const Record& r) {
  std::string out = "{";
  append_string_field(out, "collective", r.collective);
  out += ", ";
  append_string_field(out, "implementation", r.implementation);
  out += ", ";
  append_string_field(out, "type", r.type);
  out += ", ";
  append_string_field(out, "op", r.op);
  out += ", ";
  append_raw_field(out, "members", std::to_string(r.members));
  out += ", ";
  append_raw_field(out, "bytes_per_member", std::to_string(r.bytes_per_member));
  out += ", ";
  // Nine digits keep sub-nanosecond differences between runs visible.
  append_raw_field(out, "median_seconds", number(r.median_seconds, "%.9g"));
  out += ", ";
  append_raw_field(out, "gbps", number(r.gbps, "%.6g"));
  out += ", ";
  append_raw_field(out, "spread", number(r.spread, "%.4g"));
  out += ", ";
  append_raw_field(out, "samples", std::to_string(r.samples));
  if (!r.levels.empty()) out += ", \"levels\": " + levels_object(r.levels);
  out += '}';
  return out;
}

}  // namespace

std::string to_json(const std::vector<Record>& records) {
  if (records.empty()) return "[]\n";
  std::string out = "[\n";
  for (std::size_t i = 0; i < records.size(); ++i) {
    out += "  ";
    out += object_of(records[i]);
    out += i + 1 < records.size() ? ",\n" : "\n";
  }
  out += "]\n";
  return out;
}

void write_json(const std::string& path, const std::vector<Record>& records) {
  write_text_file(path, to_json(records), "--json");
}

}  // namespace hreduce::detail::compare
