// A tiny command-line reader: `--name value` and `--flag`, with errors that
// name the option.
#pragma once

#include <cstdlib>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hreduce/error.hpp"
#include "src/cli/byte_size.hpp"

namespace hreduce::cli {

class Args {
 public:
  // `flags` take no value; `valued` take one. Anything else is an error.
  Args(const std::string& command, const std::vector<std::string>& argv,
       const std::set<std::string>& flags, const std::set<std::string>& valued)
      : command_(command) {
    for (std::size_t i = 0; i < argv.size(); ++i) {
      const std::string& a = argv[i];
      if (flags.count(a)) {
        values_[a] = "";
      } else if (valued.count(a)) {
        if (i + 1 >= argv.size()) throw ArgumentError(command + ": option " + a + " needs a value");
        values_[a] = argv[++i];
      } else {
        throw ArgumentError(command + ": unknown argument '" + a + "' (try: hreduce help)");
      }
    }
    for (const char* name : {"--json", "--plot", "--xml"}) {
      if (has(name)) values_[name] = user_path(values_[name]);
    }
  }

  // Under `bazel run` the program runs in its runfiles tree: a relative
  // file name means the directory the user ran Bazel from, which Bazel
  // passes as BUILD_WORKING_DIRECTORY.
  static std::string user_path(const std::string& path) {
    const char* user_directory = std::getenv("BUILD_WORKING_DIRECTORY");
    if (path.empty() || path.front() == '/' || user_directory == nullptr || *user_directory == 0) {
      return path;
    }
    return std::string(user_directory) + "/" + path;
  }

  bool has(const std::string& name) const { return values_.count(name) != 0; }

  std::optional<std::string> get(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }

  int get_int(const std::string& name, int fallback, int min_value) const {
    auto text = get(name);
    if (!text) return fallback;
    std::size_t used = 0;
    int value = 0;
    try {
      value = std::stoi(*text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text->size() || value < min_value) {
      throw ArgumentError(command_ + ": " + name + " wants an integer >= " +
                          std::to_string(min_value) + ", got '" + *text + "'");
    }
    return value;
  }

  // A byte count with an optional unit (byte_size.hpp), at least min_bytes.
  std::size_t get_bytes(const std::string& name, std::size_t fallback,
                        std::size_t min_bytes) const {
    auto text = get(name);
    if (!text) return fallback;
    return byte_count_or_throw(command_, name, *text, min_bytes);
  }

 private:
  std::string command_;
  std::map<std::string, std::string> values_;
};

}  // namespace hreduce::cli
