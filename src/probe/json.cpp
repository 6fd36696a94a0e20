// The JSON writer and reader behind the machine description.
#include "src/probe/json.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "hreduce/error.hpp"

namespace hreduce::detail::probe {
namespace {

[[noreturn]] void wrong_kind(const std::string& what, const char* wanted) {
  throw Error("machine description: " + what + " is not " + wanted);
}

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char code[8];
      std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned>(c));
      out += code;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string number(double d) {
  if (!std::isfinite(d)) return "null";
  if (d == std::floor(d) && std::fabs(d) < 1e15) return std::to_string(static_cast<long long>(d));
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", d);
  return text;
}

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  Json document() {
    Json value = next();
    skip_space();
    if (at_ < text_.size()) fail("text after the document");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error("machine description: invalid JSON at offset " + std::to_string(at_) + ": " + why);
  }
  void skip_space() {
    while (at_ < text_.size() &&
           std::string_view(" \t\r\n").find(text_[at_]) != std::string_view::npos)
      ++at_;
  }
  bool take(char c) {
    skip_space();
    if (at_ < text_.size() && text_[at_] == c) return ++at_, true;
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(std::string("expected '") + c + "'");
  }
  bool word(std::string_view w) {
    if (text_.substr(at_, w.size()) != w) return false;
    at_ += w.size();
    return true;
  }

  Json next() {
    skip_space();
    if (at_ >= text_.size()) fail("unexpected end");
    const char c = text_[at_];
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '"') return Json(string());
    if (word("null")) return Json();
    if (word("true")) return Json(true);
    if (word("false")) return Json(false);
    return Json(parse_number());
  }

  Json object() {
    expect('{');
    Json::Object members;
    if (take('}')) return Json(std::move(members));
    do {
      skip_space();
      std::string key = string();
      expect(':');
      members.emplace_back(std::move(key), next());
    } while (take(','));
    expect('}');
    return Json(std::move(members));
  }

  Json array() {
    expect('[');
    Json::Array items;
    if (take(']')) return Json(std::move(items));
    do items.push_back(next());
    while (take(','));
    expect(']');
    return Json(std::move(items));
  }

  std::string string() {
    if (at_ >= text_.size() || text_[at_] != '"') fail("expected a string");
    std::string out;
    for (++at_; at_ < text_.size() && text_[at_] != '"'; ++at_) {
      if (text_[at_] != '\\') {
        out += text_[at_];
        continue;
      }
      if (++at_ >= text_.size()) break;
      const char e = text_[at_];
      if (e == 'u') {
        if (at_ + 4 >= text_.size()) fail("short \\u escape");
        const long code = std::strtol(std::string(text_.substr(at_ + 1, 4)).c_str(), nullptr, 16);
        out += code < 0x80 ? static_cast<char>(code) : '?';  // the writer escapes controls only
        at_ += 4;
      } else {
        const std::string_view from = "\"\\/bfnrt", to = "\"\\/\b\f\n\r\t";
        const auto k = from.find(e);
        if (k == std::string_view::npos) fail("unknown escape");
        out += to[k];
      }
    }
    if (at_ >= text_.size()) fail("unterminated string");
    ++at_;
    return out;
  }

  double parse_number() {
    const std::string rest(text_.substr(at_, 64));
    char* end = nullptr;
    const double d = std::strtod(rest.c_str(), &end);
    if (end == rest.c_str()) fail("expected a value");
    at_ += static_cast<std::size_t>(end - rest.c_str());
    return d;
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

}  // namespace

bool Json::as_bool(const std::string& what) const {
  if (const bool* b = std::get_if<bool>(&value_)) return *b;
  wrong_kind(what, "true or false");
}
double Json::as_number(const std::string& what) const {
  if (const double* d = std::get_if<double>(&value_)) return *d;
  wrong_kind(what, "a number");
}
int Json::as_int(const std::string& what) const {
  const double d = as_number(what);
  if (d != std::floor(d) || std::fabs(d) > 2e9) wrong_kind(what, "an integer");
  return static_cast<int>(d);
}
const std::string& Json::as_string(const std::string& what) const {
  if (const std::string* s = std::get_if<std::string>(&value_)) return *s;
  wrong_kind(what, "a string");
}
const Json::Array& Json::as_array(const std::string& what) const {
  if (const Array* a = std::get_if<Array>(&value_)) return *a;
  wrong_kind(what, "an array");
}

const Json* Json::find(const std::string& key) const {
  const Object* o = std::get_if<Object>(&value_);
  if (o == nullptr) return nullptr;
  for (const auto& [name, value] : *o) {
    if (name == key) return value.is_null() ? nullptr : &value;
  }
  return nullptr;
}

const Json& Json::at(const std::string& key, const std::string& what) const {
  if (!is_object()) wrong_kind(what, "an object");
  const Json* value = find(key);
  if (value == nullptr)
    throw Error("machine description: " + what + " has no field \"" + key + "\"");
  return *value;
}

std::string Json::dump(int indent) const {
  if (is_null()) return "null";
  if (const bool* b = std::get_if<bool>(&value_)) return *b ? "true" : "false";
  if (const double* d = std::get_if<double>(&value_)) return number(*d);
  if (const std::string* s = std::get_if<std::string>(&value_)) return quote(*s);
  const std::string inner(static_cast<std::size_t>(indent + 2), ' ');
  const std::string outer(static_cast<std::size_t>(indent), ' ');
  if (const Array* a = std::get_if<Array>(&value_)) {
    if (a->empty()) return "[]";
    bool flat = true;
    for (const Json& item : *a)
      flat = flat && !item.is_object() && !std::holds_alternative<Array>(item.value_);
    std::string out = "[";
    for (std::size_t i = 0; i < a->size(); ++i) {
      out += i == 0 ? "" : ",";
      out += flat ? (i == 0 ? "" : " ") : "\n" + inner;
      out += (*a)[i].dump(indent + 2);
    }
    return out + (flat ? "]" : "\n" + outer + "]");
  }
  const Object& o = std::get<Object>(value_);
  if (o.empty()) return "{}";
  std::string out = "{";
  for (std::size_t i = 0; i < o.size(); ++i) {
    out +=
        (i == 0 ? "\n" : ",\n") + inner + quote(o[i].first) + ": " + o[i].second.dump(indent + 2);
  }
  return out + "\n" + outer + "}";
}

Json Json::parse(std::string_view text) { return Reader(text).document(); }

}  // namespace hreduce::detail::probe
