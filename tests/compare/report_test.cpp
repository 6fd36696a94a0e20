// The bench reports: the --json file must load in any JSON parser and keep
// every field, and the --plot SVG must open in a browser and show each
// implementation's line in the panel of its collective and type.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hreduce/error.hpp"
#include "src/compare/record.hpp"

using hreduce::detail::compare::Record;
using hreduce::detail::compare::to_json;
using hreduce::detail::compare::to_svg;
using hreduce::detail::compare::write_json;
using hreduce::detail::compare::write_svg;

namespace {

constexpr const char* kUnwritable = "/nonexistent-dir/report";

Record record(const std::string& collective, const std::string& implementation,
              const std::string& type, std::size_t bytes, double gbps, int members = 8) {
  Record r;
  r.collective = collective;
  r.implementation = implementation;
  r.type = type;
  r.op = type == "double_int" ? "minloc" : "sum";
  r.members = members;
  r.bytes_per_member = bytes;
  r.gbps = gbps;
  r.median_seconds = 2.0 * static_cast<double>(bytes) * members / (gbps * 1e9);
  r.spread = 0.0125;
  r.samples = 21;
  return r;
}

std::filesystem::path scratch_dir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : std::filesystem::temp_directory_path();
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// What the hreduce::Error thrown by `fn` says; fails the test when none is.
template <class Fn>
std::string error_message(Fn&& fn) {
  try {
    fn();
  } catch (const hreduce::Error& e) {
    return e.what();
  }
  FAIL("no hreduce::Error thrown");
  return "";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// --- A minimal reader for one JSON object per line ---------------------------

// The raw JSON text of `key`'s value in `object`: a quoted string with its
// escapes, or a bare number / null. Empty when the key is missing.
std::string raw_value(const std::string& object, const std::string& key) {
  const std::string marker = "\"" + key + "\": ";
  const auto at = object.find(marker);
  if (at == std::string::npos) return "";
  const auto begin = at + marker.size();
  if (object[begin] != '"') return object.substr(begin, object.find_first_of(",}", begin) - begin);
  auto end = begin + 1;
  while (end < object.size() && object[end] != '"') end += object[end] == '\\' ? 2 : 1;
  return object.substr(begin, end + 1 - begin);
}

std::string string_value(const std::string& object, const std::string& key) {
  const std::string raw = raw_value(object, key);
  REQUIRE(raw.size() >= 2);
  REQUIRE(raw.front() == '"');
  REQUIRE(raw.back() == '"');
  return raw.substr(1, raw.size() - 2);
}

double number_value(const std::string& object, const std::string& key) {
  const std::string raw = raw_value(object, key);
  char* end = nullptr;
  const double value = std::strtod(raw.c_str(), &end);
  INFO(key << " = '" << raw << "'");
  REQUIRE(!raw.empty());
  REQUIRE(*end == '\0');
  return value;
}

// --- A minimal reader for the SVG --------------------------------------------

// Every tag opened is closed, in order; <?...?> and <x/> stand alone.
bool tags_balanced(const std::string& svg) {
  std::vector<std::string> open;
  for (auto at = svg.find('<'); at != std::string::npos; at = svg.find('<', at + 1)) {
    const auto close = svg.find('>', at);
    if (close == std::string::npos) return false;
    const std::string tag = svg.substr(at + 1, close - at - 1);
    if (tag.front() == '?') continue;
    const bool closing = tag.front() == '/';
    const std::string name = tag.substr(closing, tag.find_first_of(" /", 1) - closing);
    if (closing) {
      if (open.empty() || open.back() != name) return false;
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(name);
    }
  }
  return open.empty();
}

// Outside tags, '&' only starts one of XML's predefined entities.
bool ampersands_are_entities(const std::string& svg) {
  for (auto at = svg.find('&'); at != std::string::npos; at = svg.find('&', at + 1)) {
    const std::string rest = svg.substr(at, 6);
    if (rest.rfind("&amp;", 0) != 0 && rest.rfind("&lt;", 0) != 0 && rest.rfind("&gt;", 0) != 0 &&
        rest.rfind("&quot;", 0) != 0 && rest.rfind("&apos;", 0) != 0) {
      return false;
    }
  }
  return true;
}

// The opening tags `<name ...>` in document order.
std::vector<std::string> tags(const std::string& svg, const std::string& name) {
  std::vector<std::string> found;
  const std::string start = "<" + name + " ";
  for (auto at = svg.find(start); at != std::string::npos; at = svg.find(start, at + 1)) {
    found.push_back(svg.substr(at, svg.find('>', at) + 1 - at));
  }
  return found;
}

std::string attribute(const std::string& tag, const std::string& name) {
  const std::string marker = " " + name + "=\"";
  const auto at = tag.find(marker);
  if (at == std::string::npos) return "";
  const auto begin = at + marker.size();
  return tag.substr(begin, tag.find('"', begin) - begin);
}

// The contents of the <text class="..."> elements of one class.
std::vector<std::string> texts_of_class(const std::string& svg, const std::string& cls) {
  std::vector<std::string> found;
  const std::string start = "<text";
  for (auto at = svg.find(start); at != std::string::npos; at = svg.find(start, at + 1)) {
    const auto open_end = svg.find('>', at);
    if (attribute(svg.substr(at, open_end - at), "class") != cls) continue;
    found.push_back(svg.substr(open_end + 1, svg.find("</text>", open_end) - open_end - 1));
  }
  return found;
}

// Each panel's markup; panels hold no nested groups.
std::vector<std::string> panels(const std::string& svg) {
  std::vector<std::string> found;
  const std::string start = "<g class=\"panel\"";
  for (auto at = svg.find(start); at != std::string::npos; at = svg.find(start, at + 1)) {
    found.push_back(svg.substr(at, svg.find("</g>", at) - at));
  }
  return found;
}

std::vector<std::pair<double, double>> polyline_points(const std::string& polyline) {
  std::vector<std::pair<double, double>> points;
  std::istringstream in(attribute(polyline, "points"));
  for (std::string pair; in >> pair;) {
    const auto comma = pair.find(',');
    points.emplace_back(std::stod(pair.substr(0, comma)), std::stod(pair.substr(comma + 1)));
  }
  return points;
}

std::multiset<std::string> implementations_drawn(const std::string& panel) {
  std::multiset<std::string> names;
  for (const std::string& line : tags(panel, "polyline")) {
    names.insert(attribute(line, "data-implementation"));
  }
  return names;
}

std::vector<Record> two_collectives() {
  std::vector<Record> records;
  for (const char* implementation : {"hreduce", "tbb", "limit"}) {
    for (const std::size_t bytes : {8, 4096, 1 << 20}) {
      records.push_back(record("allreduce", implementation, "double", bytes, 0.5 + bytes / 1e5));
      records.push_back(record("reduce", implementation, "double", bytes, 0.25 + bytes / 2e5));
    }
  }
  records.push_back(record("allreduce", "hreduce", "int32", 4096, 3.0));
  return records;
}

}  // namespace

// --- JSON ----------------------------------------------------------------------

TEST_CASE("to_json writes one object per line with every field in order") {
  const std::vector<Record> records = {record("allreduce", "hreduce", "double", 32768, 12.5),
                                       record("scan", "tbb", "double_int", 8, 0.03125, 4)};
  const std::vector<std::string> lines = lines_of(to_json(records));
  REQUIRE(lines.size() == 4);
  CHECK(lines.front() == "[");
  CHECK(lines.back() == "]");
  CHECK(lines[1].back() == ',');
  CHECK(lines[2].back() == '}');

  const std::vector<std::string> keys = {"collective", "implementation",   "type",           "op",
                                         "members",    "bytes_per_member", "median_seconds", "gbps",
                                         "spread",     "samples"};
  std::size_t previous = 0;
  for (const std::string& key : keys) {
    const auto at = lines[1].find("\"" + key + "\":");
    INFO(key);
    REQUIRE(at != std::string::npos);
    CHECK(at > previous);
    previous = at;
  }

  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    const std::string& object = lines[i + 1];
    CHECK(string_value(object, "collective") == r.collective);
    CHECK(string_value(object, "implementation") == r.implementation);
    CHECK(string_value(object, "type") == r.type);
    CHECK(string_value(object, "op") == r.op);
    CHECK(number_value(object, "members") == r.members);
    CHECK(number_value(object, "bytes_per_member") == static_cast<double>(r.bytes_per_member));
    CHECK(number_value(object, "median_seconds") == Approx(r.median_seconds).epsilon(1e-8));
    CHECK(number_value(object, "gbps") == Approx(r.gbps).epsilon(1e-5));
    CHECK(number_value(object, "spread") == Approx(r.spread).epsilon(1e-3));
    CHECK(number_value(object, "samples") == r.samples);
  }
}

TEST_CASE("to_json keeps nine significant digits of the median") {
  Record r = record("reduce", "hreduce", "double", 8, 1.0);
  r.median_seconds = 1.23456789e-7;
  const std::string object = lines_of(to_json({r}))[1];
  CHECK(raw_value(object, "median_seconds") == "1.23456789e-07");
}

TEST_CASE("to_json escapes quotes, backslashes and control characters") {
  Record r = record("reduce", "my \"fast\" one", "C:\\double", 8, 1.0);
  r.op = std::string("tab\there, newline\nthere, bell\x07");
  const std::string object = lines_of(to_json({r}))[1];
  CHECK(string_value(object, "implementation") == "my \\\"fast\\\" one");
  CHECK(string_value(object, "type") == "C:\\\\double");
  CHECK(string_value(object, "op") == "tab\\there, newline\\nthere, bell\\u0007");
}

TEST_CASE("to_json of no records is an empty array") { CHECK(to_json({}) == "[]\n"); }

TEST_CASE("to_json writes null where a number is not finite") {
  Record r = record("reduce", "hreduce", "double", 8, 1.0);
  r.median_seconds = std::numeric_limits<double>::quiet_NaN();
  r.gbps = std::numeric_limits<double>::infinity();
  r.spread = -std::numeric_limits<double>::infinity();
  const std::string json = to_json({r});
  const std::string object = lines_of(json)[1];
  CHECK(raw_value(object, "median_seconds") == "null");
  CHECK(raw_value(object, "gbps") == "null");
  CHECK(raw_value(object, "spread") == "null");
  CHECK(json.find("nan") == std::string::npos);
  CHECK(json.find("inf") == std::string::npos);
}

TEST_CASE("write_json writes what to_json returns") {
  const std::vector<Record> records = two_collectives();
  const std::filesystem::path path = scratch_dir() / "report_test.json";
  write_json(path.string(), records);
  CHECK(read_file(path) == to_json(records));
}

TEST_CASE("write_json names the path it cannot write") {
  const std::string path = std::string(kUnwritable) + ".json";
  const std::string message =
      error_message([&] { write_json(path, {record("reduce", "hreduce", "double", 8, 1.0)}); });
  CHECK_THAT(message, Catch::Contains("'" + path + "'"));
  CHECK_THAT(message, Catch::Contains("--json"));
  CHECK_THAT(message, Catch::Contains("No such file"));
}

// --- SVG -----------------------------------------------------------------------

TEST_CASE("to_svg is a standalone, well-formed SVG document") {
  const std::string svg = to_svg(two_collectives(), "hreduce bench");
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(count(svg, "<svg") == 1);
  CHECK(count(svg, "</svg>") == 1);
  CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
  CHECK(tags_balanced(svg));
  CHECK(ampersands_are_entities(svg));
  CHECK(texts_of_class(svg, "title") == std::vector<std::string>{"hreduce bench"});
}

TEST_CASE("to_svg draws one panel per collective and type, one line per implementation") {
  const std::string svg = to_svg(two_collectives(), "t");
  CHECK(texts_of_class(svg, "panel-title") ==
        std::vector<std::string>{"allreduce (double)", "reduce (double)", "allreduce (int32)"});
  const std::vector<std::string> drawn = panels(svg);
  REQUIRE(drawn.size() == 3);
  const std::multiset<std::string> all = {"hreduce", "limit", "tbb"};
  CHECK(implementations_drawn(drawn[0]) == all);
  CHECK(implementations_drawn(drawn[1]) == all);
  CHECK(implementations_drawn(drawn[2]) == std::multiset<std::string>{"hreduce"});
  CHECK(tags(drawn[0], "circle").size() == 9);
  CHECK(tags(drawn[2], "circle").size() == 1);
  CHECK(texts_of_class(svg, "legend-entry") == std::vector<std::string>{"hreduce", "tbb", "limit"});
}

TEST_CASE("to_svg labels the byte axis in binary units and the bandwidth axis in decades") {
  std::vector<Record> records;
  for (const std::size_t bytes : {8ul, 512ul, 32768ul, 2ul << 20, 64ul << 20}) {
    records.push_back(record("allreduce", "hreduce", "double", bytes, bytes / 1e6));
  }
  const std::string svg = to_svg(records, "t");
  const std::vector<std::string> ticks = texts_of_class(svg, "tick");
  const std::set<std::string> labels(ticks.begin(), ticks.end());
  for (const char* label : {"1 KiB", "1 MiB", "32 MiB", "0.0001", "0.01", "1", "100"}) {
    INFO(label);
    CHECK(labels.count(label) == 1);
  }
}

TEST_CASE("to_svg draws each line left to right in order of size") {
  std::vector<Record> records;
  for (const std::size_t bytes : {1ul << 20, 8ul, 65536ul, 512ul, 64ul << 20}) {
    records.push_back(record("scan", "openmp_sliced", "double", bytes, 1.0 + bytes / 1e6));
  }
  const auto lines = tags(to_svg(records, "t"), "polyline");
  REQUIRE(lines.size() == 1);
  const auto points = polyline_points(lines[0]);
  REQUIRE(points.size() == records.size());
  for (std::size_t i = 1; i < points.size(); ++i) CHECK(points[i].first > points[i - 1].first);
}

TEST_CASE("to_svg draws higher bandwidth higher up") {
  // Deliberately not monotonic in size, so the order of drawing cannot decide.
  const std::vector<Record> records = {record("reduce", "hreduce", "double", 8, 0.5),
                                       record("reduce", "hreduce", "double", 4096, 40.0),
                                       record("reduce", "hreduce", "double", 1 << 20, 0.02)};
  const std::string svg = to_svg(records, "t");
  std::map<std::string, double> y_of;  // by the marker's tooltip
  for (auto at = svg.find("<circle class=\"marker\""); at != std::string::npos;
       at = svg.find("<circle class=\"marker\"", at + 1)) {
    const std::string element = svg.substr(at, svg.find("</circle>", at) - at);
    const auto title = element.find("<title>") + 7;
    const std::string tooltip = element.substr(title, element.find("</title>") - title);
    y_of[tooltip] = std::stod(attribute(element, "cy"));
  }
  REQUIRE(y_of.size() == 3);
  const double highest = y_of.at("hreduce: 4 KiB, 40 GB/s");
  const double middle = y_of.at("hreduce: 8 B, 0.5 GB/s");
  const double lowest = y_of.at("hreduce: 1 MiB, 0.02 GB/s");
  CHECK(highest < middle);
  CHECK(middle < lowest);
}

TEST_CASE("to_svg gives hreduce its own strong line and dashes the limit") {
  const auto lines = tags(to_svg(two_collectives(), "t"), "polyline");
  for (const std::string& line : lines) {
    const std::string name = attribute(line, "data-implementation");
    INFO(line);
    if (name == "hreduce") {
      CHECK(attribute(line, "stroke") == "#d62728");
      CHECK(std::stod(attribute(line, "stroke-width")) > 2);
    }
    CHECK(attribute(line, "stroke-dasharray").empty() == (name != "limit"));
  }
  // Names the palette does not know still get a colour each.
  const std::string svg = to_svg(
      {record("reduce", "mine", "double", 8, 1.0), record("reduce", "theirs", "double", 8, 1.0)},
      "t");
  const auto unknown = tags(svg, "polyline");
  REQUIRE(unknown.size() == 2);
  CHECK(attribute(unknown[0], "stroke") != attribute(unknown[1], "stroke"));
}

TEST_CASE("to_svg splits panels by team size when records differ in it") {
  const std::vector<Record> records = {record("allreduce", "hreduce", "double", 8, 1.0, 4),
                                       record("allreduce", "hreduce", "double", 8, 2.0, 16),
                                       record("allreduce", "tbb", "double", 8, 1.5, 4)};
  const std::string svg = to_svg(records, "t");
  CHECK(
      texts_of_class(svg, "panel-title") ==
      std::vector<std::string>{"allreduce (double), 4 members", "allreduce (double), 16 members"});
  const std::vector<std::string> drawn = panels(svg);
  REQUIRE(drawn.size() == 2);
  CHECK(implementations_drawn(drawn[0]) == std::multiset<std::string>{"hreduce", "tbb"});
  CHECK(implementations_drawn(drawn[1]) == std::multiset<std::string>{"hreduce"});
}

TEST_CASE("to_svg leaves out points a log axis cannot place") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<Record> records = {record("reduce", "hreduce", "double", 8, 0.0),
                                       record("reduce", "hreduce", "double", 16, -1.0),
                                       record("reduce", "hreduce", "double", 32, nan),
                                       record("reduce", "hreduce", "double", 64, inf),
                                       record("reduce", "hreduce", "double", 0, 5.0),
                                       record("reduce", "hreduce", "double", 128, 2.0),
                                       record("scan", "tbb", "double", 8, nan)};
  const std::string svg = to_svg(records, "t");
  CHECK(tags(svg, "circle").size() == 2);  // the one marker and its legend sample
  CHECK(tags(svg, "circle class=\"marker\"").size() == 1);
  CHECK(texts_of_class(svg, "panel-title") == std::vector<std::string>{"reduce (double)"});
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);
  CHECK(tags_balanced(svg));
}

TEST_CASE("to_svg of no records is still a document") {
  const std::string svg = to_svg({}, "empty");
  CHECK(tags_balanced(svg));
  CHECK(panels(svg).empty());
  CHECK(texts_of_class(svg, "empty").size() == 1);
}

TEST_CASE("to_svg escapes XML in titles and names") {
  const std::string svg =
      to_svg({record("a<b", "x&y", "double", 8, 1.0)}, "bench <quick> & \"dirty\"");
  CHECK(texts_of_class(svg, "title") ==
        std::vector<std::string>{"bench &lt;quick&gt; &amp; &quot;dirty&quot;"});
  CHECK(texts_of_class(svg, "panel-title") == std::vector<std::string>{"a&lt;b (double)"});
  CHECK(svg.find("a<b") == std::string::npos);
  CHECK(svg.find("x&y") == std::string::npos);
  CHECK(tags_balanced(svg));
  CHECK(ampersands_are_entities(svg));
}

TEST_CASE("write_svg writes what to_svg returns") {
  const std::vector<Record> records = two_collectives();
  const std::filesystem::path path = scratch_dir() / "report_test.svg";
  write_svg(path.string(), records, "written");
  CHECK(read_file(path) == to_svg(records, "written"));
}

TEST_CASE("write_svg names the path it cannot write") {
  const std::string path = std::string(kUnwritable) + ".svg";
  const std::string message = error_message([&] { write_svg(path, two_collectives(), "t"); });
  CHECK_THAT(message, Catch::Contains("'" + path + "'"));
  CHECK_THAT(message, Catch::Contains("--plot"));
}
