// Progress on stderr while the bench measures: where stdout and stderr are
// both terminals, a one-line bar drawn before each row and cleared before
// the row prints; otherwise (a file, a pipe, `tee`, CI) a line per finished
// row. Under mpirun stderr is a pipe (stdout a pseudo-terminal), so there
// it is lines.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

namespace hreduce::cli {

class Progress {
 public:
  enum class Mode { none, bar, lines };  // none: not the speaker

  // `speaker`: this process prints (rank 0 under MPI).
  Progress(int total, std::string what, bool speaker = true)
      : total_(total), what_(std::move(what)), mode_(speaker ? chosen_mode() : Mode::none) {}
  ~Progress() { clear(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  static Mode chosen_mode() {
    return isatty(STDOUT_FILENO) != 0 && isatty(STDERR_FILENO) != 0 ? Mode::bar : Mode::lines;
  }

  // Before row `done` (0-based) starts: the bar.
  void starting(int done, const std::string& label) {
    if (mode_ != Mode::bar) return;
    constexpr int kWidth = 30;
    const int filled = total_ > 0 ? done * kWidth / total_ : kWidth;
    std::string bar(filled, '#');
    bar.resize(kWidth, '.');
    std::fprintf(stderr, "\r\033[K[%s] %d/%d %s", bar.c_str(), done, total_, label.c_str());
    std::fflush(stderr);
  }
  // After row `done` (1-based count) printed: the line.
  void finished(int done, const std::string& label) {
    if (mode_ != Mode::lines) return;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr, "%s: %d/%d rows done (%s), %.0f s\n", what_.c_str(), done, total_,
                 label.c_str(), seconds);
    std::fflush(stderr);
  }
  // Before anything else is printed on the terminal.
  void clear() {
    if (mode_ != Mode::bar) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }

 private:
  int total_;
  std::string what_;
  Mode mode_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace hreduce::cli
