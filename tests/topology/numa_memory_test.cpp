// detail::NumaBuffer: sized, writable, aligned memory, whichever way it was
// placed, with move-only ownership; the placement it was asked for, and
// where the kernel reports it, the policy the kernel holds for its pages.
#include <catch2/catch.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "hreduce/topology.hpp"
#include "src/topology/numa_memory.hpp"
#include "tests/support/mempolicy.hpp"

using hreduce::Topology;
using hreduce::detail::NumaBuffer;

namespace {

bool page_aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 4096 == 0; }

// Fills every byte with a position-dependent pattern and reads it back.
bool round_trips(NumaBuffer& buffer) {
  auto* bytes = static_cast<unsigned char*>(buffer.data());
  for (std::size_t i = 0; i < buffer.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 31 + 7);
  for (std::size_t i = 0; i < buffer.size(); ++i) {
    if (bytes[i] != static_cast<unsigned char>(i * 31 + 7)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("1 MiB on NUMA node 0 of this machine", "[numa]") {
  const auto t = Topology::discover();
  NumaBuffer buffer(t, std::size_t{1} << 20, 0);
  REQUIRE(buffer.data() != nullptr);
  CHECK(buffer.size() == std::size_t{1} << 20);
  CHECK(page_aligned(buffer.data()));
  CHECK(round_trips(buffer));
  // Containers often forbid mbind; either outcome is correct, so report it.
  WARN("bound: " << buffer.bound());
}

TEST_CASE("every size and placement request gives usable memory", "[numa]") {
  const auto real = Topology::discover();
  const auto synthetic = Topology::synthetic("numa:2 core:1 pu:1");
  const bool use_real = GENERATE(true, false);
  const Topology& t = use_real ? real : synthetic;
  const int numa = GENERATE(-1, 0, 1);
  const std::size_t bytes = GENERATE(std::size_t{1}, std::size_t{7}, std::size_t{100},
                                     std::size_t{4096}, std::size_t{100003});
  CAPTURE(use_real, numa, bytes);
  NumaBuffer buffer(t, bytes, numa);
  REQUIRE(buffer.data() != nullptr);
  CHECK(buffer.size() == bytes);
  CHECK(page_aligned(buffer.data()));
  CHECK(round_trips(buffer));
  // Only real, existing nodes of this machine are bound.
  if (!use_real || numa < 0 || numa >= t.count(hreduce::Level::numa)) {
    CHECK_FALSE(buffer.bound());
  }
}

TEST_CASE("zero bytes is an empty buffer", "[numa]") {
  const auto t = Topology::discover();
  const int numa = GENERATE(-1, 0);
  NumaBuffer buffer(t, 0, numa);
  CHECK(buffer.data() == nullptr);
  CHECK(buffer.size() == 0);
  CHECK_FALSE(buffer.bound());
}

TEST_CASE("NumaBuffer moves ownership and frees exactly once", "[numa]") {
  const auto t = Topology::discover();
  NumaBuffer first(t, 8192, 0);
  void* const memory = first.data();
  const bool placed = first.bound();

  NumaBuffer second(std::move(first));
  CHECK(second.data() == memory);
  CHECK(second.size() == 8192);
  CHECK(second.bound() == placed);
  CHECK(first.data() == nullptr);  // NOLINT(bugprone-use-after-move): moved-from state is specified
  CHECK(first.size() == 0);

  NumaBuffer third(t, 100, -1);
  third = std::move(second);  // frees third's old memory (ASan checks it)
  CHECK(third.data() == memory);
  CHECK(third.size() == 8192);
  CHECK(second.data() == nullptr);  // NOLINT(bugprone-use-after-move)

  NumaBuffer empty;
  CHECK(empty.data() == nullptr);
  empty = std::move(third);
  CHECK(empty.data() == memory);
  CHECK(round_trips(empty));
}

static_assert(!std::is_copy_constructible_v<NumaBuffer>);
static_assert(!std::is_copy_assignable_v<NumaBuffer>);
static_assert(std::is_nothrow_move_constructible_v<NumaBuffer>);
static_assert(std::is_nothrow_move_assignable_v<NumaBuffer>);

TEST_CASE("a NumaBuffer remembers where it was asked to live", "[numa]") {
  using hreduce::detail::NumaRange;
  const auto synthetic = Topology::synthetic("numa:2 core:1 pu:1");
  CHECK(NumaBuffer(synthetic, 5000, 1).requested() == std::vector<NumaRange>{{0, 5000, 1}});
  CHECK(NumaBuffer(synthetic, 5000, -1).requested().empty());
  const std::vector<NumaRange> ranges{{0, 4096, 1}, {4096, 12288, 0}};
  NumaBuffer spread(synthetic, 10000, ranges);
  CHECK(spread.requested() == ranges);
  // Not this machine: nothing bound, zeroed memory all the same.
  CHECK_FALSE(spread.bound());
  const auto* bytes = static_cast<const unsigned char*>(spread.data());
  CHECK(std::all_of(bytes, bytes + 10000, [](unsigned char b) { return b == 0; }));
}

namespace {

// The kernel's word on the page at `address`, against the node asked for;
// false (and a warning) where the kernel does not answer.
bool kernel_reports(const Topology& t, const void* address, int numa_logical) {
  const auto policy = hreduce::test::page_policy(address);
  if (!policy) {
    WARN("the kernel does not report memory policies here (get_mempolicy failed)");
    return false;
  }
  CHECK(policy->mode == MPOL_BIND);
  CHECK(policy->nodes == std::uint64_t{1} << t.numa_os_index(numa_logical));
  return true;
}

}  // namespace

TEST_CASE("the memory policy asked for is the one the kernel reports", "[numa]") {
  const auto t = Topology::discover();
  const int last = t.count(hreduce::Level::numa) - 1;
  REQUIRE(last >= 0);
  SECTION("one node for a whole buffer") {
    NumaBuffer buffer(t, 100000, last);
    if (!buffer.bound()) {
      WARN("the kernel refused mbind here; the buffer is first-touch memory");
      return;
    }
    auto* bytes = static_cast<unsigned char*>(buffer.data());
    for (std::size_t at = 0; at < buffer.size(); at += 4096) {
      bytes[at] = 1;
      if (!kernel_reports(t, bytes + at, last)) return;
      if (const auto node = hreduce::test::page_node(bytes + at)) {
        CHECK(*node == t.numa_os_index(last));
      }
    }
  }
  SECTION("ranges of one buffer") {
    const std::vector<hreduce::detail::NumaRange> ranges{{0, 8192, 0}, {8192, 20480, last}};
    NumaBuffer buffer(t, 20000, ranges);
    if (!buffer.bound()) {
      WARN("the kernel refused mbind here; the buffer is first-touch memory");
      return;
    }
    const auto* bytes = static_cast<const unsigned char*>(buffer.data());
    CHECK(std::all_of(bytes, bytes + 20000, [](unsigned char b) { return b == 0; }));
    for (const auto& range : ranges) {
      for (std::size_t at = range.lo; at < range.hi; at += 4096) {
        if (!kernel_reports(t, bytes + at, range.numa)) return;
      }
    }
  }
  SECTION("whole pages of private and of shared memory, as a node segment's") {
    const int sharing = GENERATE(MAP_PRIVATE, MAP_SHARED);
    const std::size_t bytes = 16 * 4096;
    void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, sharing | MAP_ANONYMOUS, -1, 0);
    REQUIRE(memory != MAP_FAILED);
    auto* base = static_cast<unsigned char*>(memory);
    base[0] = 1;  // touched before: the binding moves it
    // Pages 1..14 wholly inside [100, 15 pages + 100): page 0 keeps its policy.
    if (hreduce::detail::bind_pages(t, base + 100, 15 * 4096, last)) {
      for (std::size_t page = 1; page < 15; ++page) {
        if (!kernel_reports(t, base + page * 4096, last)) break;
      }
      const auto first = hreduce::test::page_policy(base);
      if (first) CHECK(first->mode == MPOL_DEFAULT);
    } else {
      WARN("the kernel refused mbind here");
    }
    munmap(memory, bytes);
  }
}

TEST_CASE("bind_pages binds nothing it cannot", "[numa]") {
  const auto t = Topology::discover();
  std::vector<unsigned char> small(100);
  // Less than one whole page, a synthetic machine, a node that is not there.
  CHECK_FALSE(hreduce::detail::bind_pages(t, small.data(), small.size(), 0));
  std::vector<unsigned char> large(1 << 20);
  CHECK_FALSE(hreduce::detail::bind_pages(Topology::synthetic("numa:2 core:1 pu:1"), large.data(),
                                          large.size(), 0));
  CHECK_FALSE(hreduce::detail::bind_pages(t, large.data(), large.size(), -1));
  CHECK_FALSE(
      hreduce::detail::bind_pages(t, large.data(), large.size(), t.count(hreduce::Level::numa)));
}
