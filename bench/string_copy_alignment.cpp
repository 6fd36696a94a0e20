// What a copy costs by where its destination lies relative to its source,
// three ways: glibc's memcpy (`rep movsb` above 2 KiB on the machines that
// have ERMS), the library's copy_bytes (vector moves, src/common/copy.hpp),
// and process_vm_readv on this process's own memory (the kernel's copy,
// which the node level's single copy uses between processes). On AMD Zen 3
// the first and the last crawl where the destination lies 1-31 bytes past
// the source modulo a 4 KiB page (string_copy_crawls); the node level then
// copies through a buffer of its own at the other side's line offset.
//
// Each cell: the best of 50 copies, µs; every copy's bytes are checked.
//
//   bazel run -c opt //bench:string_copy_alignment [-- BYTES...]   (default 32768 262144)
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "src/common/copy.hpp"

namespace {

constexpr int kCopies = 50;
constexpr std::size_t kPage = 4096;

enum class Way { memcpy, copy_bytes, process_vm_readv };

const char* name_of(Way way) {
  switch (way) {
    case Way::memcpy: return "memcpy";
    case Way::copy_bytes: return "copy_bytes";
    case Way::process_vm_readv: return "process_vm_readv";
  }
  return "?";
}

void copy(Way way, std::byte* to, const std::byte* from, std::size_t bytes) {
  if (way == Way::memcpy) {
    std::memcpy(to, from, bytes);
    asm volatile("" : : "r"(to) : "memory");  // the copy is used
  } else if (way == Way::copy_bytes) {
    hreduce::detail::copy_bytes(to, from, bytes);
  } else {
    iovec mine{to, bytes}, theirs{const_cast<std::byte*>(from), bytes};
    if (process_vm_readv(getpid(), &mine, 1, &theirs, 1, 0) != static_cast<ssize_t>(bytes)) {
      std::perror("string_copy_alignment: process_vm_readv");
      std::exit(1);
    }
  }
}

// Best µs of kCopies copies of `bytes` from a page-aligned source to `distance`
// bytes past another page-aligned buffer, checked.
double best_copy(Way way, std::size_t bytes, std::size_t distance,
                 std::vector<std::byte>& source_memory, std::vector<std::byte>& target_memory) {
  auto page_aligned = [](std::vector<std::byte>& memory) {
    const auto start = reinterpret_cast<std::uintptr_t>(memory.data());
    return reinterpret_cast<std::byte*>((start + kPage - 1) / kPage * kPage);
  };
  const std::byte* from = page_aligned(source_memory);
  std::byte* to = page_aligned(target_memory) + distance;
  double best = 1e300;
  for (int c = 0; c < kCopies; ++c) {
    std::memset(to, 0, bytes);
    const auto start = std::chrono::steady_clock::now();
    copy(way, to, from, bytes);
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
  }
  if (std::memcmp(to, from, bytes) != 0) {
    std::fprintf(stderr, "string_copy_alignment: %s at distance %zu copied wrong bytes\n",
                 name_of(way), distance);
    std::exit(1);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i) {
    char* end = nullptr;
    const unsigned long long bytes = std::strtoull(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || bytes == 0 || bytes > (std::size_t{1} << 30)) {
      std::fprintf(stderr, "string_copy_alignment: sizes are 1 B to 1 GiB, not '%s'\n", argv[i]);
      return 2;
    }
    sizes.push_back(bytes);
  }
  if (sizes.empty()) sizes = {32768, 262144};
  const std::size_t distances[] = {0, 8, 16, 31, 32, 48, 64, 2048, kPage + 16};
  for (std::size_t bytes : sizes) {
    std::vector<std::byte> source_memory(bytes + 2 * kPage, std::byte{7});
    std::vector<std::byte> target_memory(bytes + 3 * kPage);
    for (std::size_t i = 0; i < source_memory.size(); ++i) {
      source_memory[i] = static_cast<std::byte>(i * 13 + 5);
    }
    std::printf("%zu B, best of %d, us, by the destination's distance past the source:\n", bytes,
                kCopies);
    std::printf("  %-9s %10s %12s %18s  %s\n", "distance", "memcpy", "copy_bytes",
                "process_vm_readv", "crawls?");
    for (std::size_t distance : distances) {
      std::printf("  %-9zu", distance);
      for (Way way : {Way::memcpy, Way::copy_bytes, Way::process_vm_readv}) {
        const int width = way == Way::memcpy ? 10 : way == Way::copy_bytes ? 12 : 18;
        std::printf(" %*.2f", width, best_copy(way, bytes, distance, source_memory, target_memory));
      }
      const auto address = [](std::uintptr_t a) { return reinterpret_cast<const void*>(a); };
      const bool crawls =
          hreduce::detail::string_copy_crawls(address(kPage + distance), address(kPage));
      std::printf("  %s\n", crawls ? "yes" : "no");
    }
    std::fflush(stdout);
  }
  return 0;
}
