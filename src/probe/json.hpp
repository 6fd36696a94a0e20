// A small JSON value, its writer and its reader: enough for the machine
// description to be written and read back (a later model reads it).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace hreduce::detail::probe {

class Json {
 public:
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;  // in the order written

  Json() = default;  // null
  Json(bool b) : value_(b) {}
  Json(double d) : value_(d) {}
  Json(int i) : value_(static_cast<double>(i)) {}
  Json(std::uint64_t u) : value_(static_cast<double>(u)) {}
  Json(const char* s) : value_(std::string(s)) {}
  Json(std::string s) : value_(std::move(s)) {}
  Json(Array a) : value_(std::move(a)) {}
  Json(Object o) : value_(std::move(o)) {}

  bool is_null() const { return std::holds_alternative<std::monostate>(value_); }
  bool is_object() const { return std::holds_alternative<Object>(value_); }
  // Each throws Error naming `what` (the field's path) when the kind differs.
  bool as_bool(const std::string& what) const;
  double as_number(const std::string& what) const;
  int as_int(const std::string& what) const;
  const std::string& as_string(const std::string& what) const;
  const Array& as_array(const std::string& what) const;
  // A member of an object; throws Error naming the path when it is missing.
  const Json& at(const std::string& key, const std::string& what) const;
  // nullptr when missing or null.
  const Json* find(const std::string& key) const;

  // Objects and arrays of containers one entry per line, indented; arrays
  // of numbers on one line. Numbers keep 17 significant digits; NaN and
  // infinities, which JSON cannot hold, are written as null.
  std::string dump(int indent = 0) const;
  // Throws Error with the offset of the first character it cannot read.
  static Json parse(std::string_view text);

 private:
  std::variant<std::monostate, bool, double, std::string, Array, Object> value_;
};

}  // namespace hreduce::detail::probe
