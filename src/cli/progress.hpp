// A one-line progress bar on stderr, drawn only when stderr is a terminal,
// so that logs and pipes get the plain table and nothing else.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>

namespace hreduce::cli {

class ProgressBar {
 public:
  explicit ProgressBar(int total) : total_(total), on_(isatty(STDERR_FILENO) != 0) {}
  ~ProgressBar() { clear(); }

  void show(int done, const std::string& label) {
    if (!on_) return;
    constexpr int kWidth = 30;
    const int filled = total_ > 0 ? done * kWidth / total_ : kWidth;
    std::string bar(filled, '#');
    bar.resize(kWidth, '.');
    std::fprintf(stderr, "\r\033[K[%s] %d/%d %s", bar.c_str(), done, total_, label.c_str());
    std::fflush(stderr);
  }
  // Before anything else is printed on the terminal.
  void clear() {
    if (!on_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }

 private:
  int total_;
  bool on_;
};

}  // namespace hreduce::cli
