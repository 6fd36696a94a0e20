// Topology::render(): the tree lstopo would draw, rebuilt from the flat
// per-PU containers. PUs are in depth-first order, so walking them level by
// level and opening a new group whenever the container index changes
// recovers the nesting without keeping hwloc's tree around.
#include <array>
#include <cstdint>
#include <string>

#include "hreduce/topology.hpp"

namespace hreduce {
namespace {

// Machine is the root line; the rest are drawn outermost first.
constexpr std::array<Level, 7> kDrawn = {Level::package, Level::numa, Level::l3, Level::l2,
                                         Level::l1,      Level::core, Level::pu};

std::string format_bytes(std::uint64_t bytes) {
  constexpr std::uint64_t kKiB = 1024;
  constexpr std::uint64_t kMiB = kKiB * 1024;
  constexpr std::uint64_t kGiB = kMiB * 1024;
  if (bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
  if (bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes % kKiB == 0) return std::to_string(bytes / kKiB) + " KiB";
  return std::to_string(bytes) + " B";
}

class Renderer {
 public:
  explicit Renderer(const Topology& topology) : topology_(topology) {}

  std::string run() {
    out_ = "Machine (" + topology_.source() + ")\n";
    draw(0, topology_.pu_count(), 0, 1);
    return out_;
  }

 private:
  // Draws PUs [begin, end), which share every container above kDrawn[step].
  void draw(int begin, int end, std::size_t step, int depth) {
    if (step == kDrawn.size()) return;
    const Level level = kDrawn[step];
    if (topology_.count(level) == 0) {
      draw(begin, end, step + 1, depth);
      return;
    }
    const auto& pus = topology_.pus();
    for (int first = begin; first < end;) {
      const int container = pus[first].in(level);
      int last = first + 1;
      while (last < end && pus[last].in(level) == container) ++last;
      // An irregular machine may lack this level above some PUs only.
      if (container < 0) {
        draw(first, last, step + 1, depth);
      } else {
        line(level, container, pus[first], depth);
        draw(first, last, step + 1, depth + 1);
      }
      first = last;
    }
  }

  void line(Level level, int index, const Pu& pu, int depth) {
    out_.append(static_cast<std::size_t>(2 * depth), ' ');
    out_ += label(level) + " L#" + std::to_string(index);
    if (level == Level::pu) {
      out_ += " (P#" + std::to_string(pu.os_index) + ")";
    } else if (level == Level::numa) {
      out_ += " (P#" + std::to_string(topology_.numa_os_index(index)) + ")";
    } else if (level == Level::l3 || level == Level::l2 || level == Level::l1) {
      if (const std::uint64_t bytes = topology_.cache_bytes(level); bytes != 0) {
        out_ += " (" + format_bytes(bytes) + ")";
      }
    }
    out_ += '\n';
  }

  static std::string label(Level level) {
    switch (level) {
      case Level::package: return "Package";
      case Level::numa: return "NUMANode";
      case Level::l3: return "L3";
      case Level::l2: return "L2";
      case Level::l1: return "L1";
      case Level::core: return "Core";
      case Level::pu: return "PU";
      case Level::machine: break;
    }
    return "Machine";
  }

  const Topology& topology_;
  std::string out_;
};

}  // namespace

std::string Topology::render() const { return Renderer(*this).run(); }

}  // namespace hreduce
