// The node level on its own: P "processes" (threads here, so ThreadSanitizer
// sees the protocol; real processes in node_fault_test) meet in one named
// segment made by SharedSegment::for_node over an in-memory channel, and
// every node operation is checked against a sequential loop over node ranks.
#include "src/node/node_group.hpp"

#include <dirent.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "hreduce/error.hpp"
#include "src/common/asymmetric_fence.hpp"
#include "src/node/cross_memory.hpp"
#include "src/transport/in_memory_channel.hpp"
#include "tests/engine/families.hpp"

using namespace hreduce;
using namespace hreduce::detail;
using hreduce::test::Affine;
using hreduce::test::affine_op;
using hreduce::test::compose;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kChunk = 4096;  // small, so short vectors take many steps

// Runs fn(group, rank) on P threads, each a "process" of one node; returns
// each one's failure texts (in order) or exception message.
std::vector<std::string> on_node(int P, const std::function<std::string(NodeGroup&, int)>& fn,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(30),
                                 bool run_ahead = true, std::size_t chunk = kChunk) {
  InMemoryFabric fabric(P);
  std::vector<std::string> said(P);
  std::vector<std::thread> processes;
  for (int k = 0; k < P; ++k) {
    processes.emplace_back([&, k] {
      try {
        const std::size_t bytes = NodeGroup::segment_bytes(P, chunk);
        SharedSegment segment = SharedSegment::for_node(fabric.endpoint(k), bytes);
        NodeGroup group(std::move(segment), k, P, 0, chunk, timeout, true, run_ahead);
        said[k] = fn(group, k);
      } catch (const std::exception& e) {
        said[k] = std::string("threw: ") + e.what();
      }
    });
  }
  for (auto& p : processes) p.join();
  return said;
}

NodeCallInfo info(CollectiveKind kind, std::size_t count, std::uint64_t signature = 7) {
  NodeCallInfo i;
  i.signature = signature;
  i.kind = kind;
  i.count = count;
  i.type_name = "long";
  i.op_name = "sum";
  return i;
}

long input(int rank, std::size_t i) {
  return static_cast<long>(rank * 1000003 + i * 7919 % 1009) - 500;
}

// Element i of process q's input to the non-commutative cases.
Affine affine_input(int q, std::size_t i) { return Affine{3 + 2 * q + i % 5, q + 7 * i}; }

// The oracle: affine_input(0, i) ∘ … ∘ affine_input(upto, i).
Affine affine_fold(int upto, std::size_t i) {
  Affine all = affine_input(0, i);
  for (int q = 1; q <= upto; ++q) all = compose(all, affine_input(q, i));
  return all;
}

// A non-commutative op that promises not to throw, as MPI's ops do (the
// single copy serves only those).
ErasedOp non_throwing_affine() {
  ErasedOp op = erase_op<Affine>(affine_op);
  op.may_throw = false;
  return op;
}

// The same composition, slowed by a microsecond per element spent on the
// clock: a process folding with it takes longer for its part of the single
// copy by as much under a sanitizer as without.
const auto slow_affine_op = make_op<Affine>(
    [](const Affine& f, const Affine& g) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(1);
      while (std::chrono::steady_clock::now() < until) {
      }
      return compose(f, g);
    },
    Commutativity::non_commutative);

// A node reduction of `kind` over n elements: the output of a reduce
// (root's) or allreduce, else the prefix of a scan or exscan.
NodeReduction reduction_of(CollectiveKind kind, const void* in, void* out, std::size_t n,
                           const ErasedOp& op, int rank, int root) {
  NodeReduction r;
  r.in = in;
  r.count = n;
  r.op = &op;
  if (kind == CollectiveKind::reduce || kind == CollectiveKind::allreduce) {
    r.out = out;
    r.out_hi = kind == CollectiveKind::allreduce || rank == root ? n : 0;
  } else {
    r.prefix = out;
    r.inclusive = kind == CollectiveKind::scan;
  }
  return r;
}

// The last node rank whose input process `rank` receives folded, of P;
// -1 where it receives nothing.
int received_upto(CollectiveKind kind, int rank, int root, int P) {
  return kind == CollectiveKind::allreduce ? P - 1
         : kind == CollectiveKind::reduce  ? (rank == root ? P - 1 : -1)
         : kind == CollectiveKind::scan    ? rank
                                           : rank - 1;
}

// HREDUCE_NODE_SINGLE_COPY=`value` while it lives (null: unset, which
// means on); unset after.
struct SingleCopyEnvironment {
  explicit SingleCopyEnvironment(const char* value) {
    if (value == nullptr) {
      unsetenv("HREDUCE_NODE_SINGLE_COPY");
    } else {
      setenv("HREDUCE_NODE_SINGLE_COPY", value, 1);
    }
  }
  ~SingleCopyEnvironment() { unsetenv("HREDUCE_NODE_SINGLE_COPY"); }
  SingleCopyEnvironment(const SingleCopyEnvironment&) = delete;
  SingleCopyEnvironment& operator=(const SingleCopyEnvironment&) = delete;
};

// Segments this process made that are still in /dev/shm.
std::vector<std::string> my_segments() {
  std::vector<std::string> found;
  const std::string prefix = std::string(kSegmentPrefix) + std::to_string(getpid()) + ".";
  if (DIR* dir = opendir("/dev/shm")) {
    while (dirent* entry = readdir(dir)) {
      if (std::string(entry->d_name).rfind(prefix, 0) == 0) found.push_back(entry->d_name);
    }
    closedir(dir);
  }
  return found;
}

}  // namespace

TEST_CASE("node reductions match a sequential loop over node ranks", "[node][conformance]") {
  const int P = GENERATE(1, 2, 3, 5);
  // Longs that fill an announcement: 16 KiB over the other processes,
  // within 512 B and 16 KiB, in whole lines.
  const std::size_t fill = P <= 2 ? 2048 : P == 3 ? 1024 : 512;
  const std::size_t n =
      GENERATE_COPY(std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{64},
                    std::size_t{100}, fill, fill + 1, std::size_t{5000});
  const bool in_place = GENERATE(false, true);
  // Even ranks ask for inclusive prefixes, odd ones for exclusive: a team
  // mixes them when some processes hold one member and others more.
  const bool mixed = GENERATE(false, true);
  // Without any part of the total (an exscan on one node), nobody reads
  // the last process's input, which is then not staged.
  const bool with_total = GENERATE(true, false);
  INFO(P << " processes, n = " << n << (in_place ? ", in place" : "")
         << (mixed ? ", inclusive on even ranks" : "") << (with_total ? "" : ", prefixes only"));
  // Received: the middle third of the vector; scan prefixes: everything.
  const std::size_t lo = n / 3, hi = 2 * n / 3;
  auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
    if (g.inline_bytes() != fill * sizeof(long)) return "inline_bytes() is wrong";
    std::vector<long> in(n), total(n), prefix(n, -1);
    for (std::size_t i = 0; i < n; ++i) in[i] = input(rank, i);
    for (int rep = 0; rep < 3; ++rep) {  // steps carry over between operations
      NodeReduction r;
      r.in = in.data();
      r.count = n;
      const ErasedOp op = erase_op<long>(op::sum);
      r.op = &op;
      r.out = in_place ? in.data() + lo : total.data();
      r.out_lo = lo;
      r.out_hi = with_total ? hi : lo;
      r.prefix = prefix.data();
      r.inclusive = mixed && rank % 2 == 0;
      std::vector<long> original = in;
      const std::string failure = g.reduce(info(CollectiveKind::allreduce, n), r).text;
      if (!failure.empty()) return failure;
      for (std::size_t i = 0; i < n; ++i) {
        long all = 0, below = 0;
        for (int q = 0; q < P; ++q) {
          all += input(q, i);
          if (q < rank || (q == rank && r.inclusive)) below += input(q, i);
        }
        const bool received = with_total && i >= lo && i < hi;
        const long got = received ? (in_place ? in[i] : total[i - lo]) : all;
        if (got != all) return "element " + std::to_string(i) + ": " + std::to_string(got);
        if ((rank > 0 || r.inclusive) && prefix[i] != below) {
          return "prefix " + std::to_string(i) + ": " + std::to_string(prefix[i]);
        }
      }
      in = original;
    }
    return {};
  });
  for (int k = 0; k < P; ++k) CHECK(said[k] == "");
  CHECK(my_segments().empty());
}

TEST_CASE("a non-commutative op combines in node rank order", "[node][conformance]") {
  const int P = GENERATE(2, 3, 4);
  const std::size_t n = GENERATE(std::size_t{1}, std::size_t{300}, std::size_t{2000});
  auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
    std::vector<Affine> in(n), out(n), prefix(n);
    for (std::size_t i = 0; i < n; ++i) in[i] = affine_input(rank, i);
    const ErasedOp op = erase_op<Affine>(affine_op);
    NodeReduction r;
    r.in = in.data();
    r.count = n;
    r.op = &op;
    r.out = out.data();
    r.out_hi = n;
    r.prefix = prefix.data();
    const std::string failure = g.reduce(info(CollectiveKind::scan, n), r).text;
    if (!failure.empty()) return failure;
    for (std::size_t i = 0; i < n; ++i) {
      if (!(out[i] == affine_fold(P - 1, i))) return "total " + std::to_string(i);
      if (rank > 0 && !(prefix[i] == affine_fold(rank - 1, i))) {
        return "prefix " + std::to_string(i);
      }
    }
    return {};
  });
  for (int k = 0; k < P; ++k) CHECK(said[k] == "");
}

TEST_CASE("an input that only its own process reads is folded in place, in node rank order",
          "[node][conformance]") {
  // A reduce's receiver and a scan's last process say that nobody else
  // reads their input (NodeReduction::input_private): a short one then
  // stays out of the announcement, unless the fold would overwrite it
  // before reading it (in place on node rank 2 and up). 300 elements go
  // through the chunks from 5 processes, where the flag changes nothing;
  // 4000 (62.5 KiB) and 8000 (125 KiB, past the announcement's own
  // payload) inline only in a reduce on two processes.
  const int P = GENERATE(1, 2, 3, 5);
  const std::size_t n = GENERATE(std::size_t{1}, std::size_t{7}, std::size_t{300},
                                 std::size_t{4000}, std::size_t{8000});
  const bool in_place = GENERATE(false, true);
  const int receiver = GENERATE_COPY(0, P / 2, P - 1);
  const bool inclusive = GENERATE(false, true);
  INFO(P << " processes, n = " << n << (in_place ? ", in place" : "") << ", receiver " << receiver
         << (inclusive ? ", scan" : ", exscan"));
  const ErasedOp op = non_throwing_affine();
  auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
    if (g.inline_bytes(CollectiveKind::reduce) !=
        (P == 2 ? kNodeInlineOneReceiver : g.inline_bytes())) {
      return "inline_bytes(reduce) is wrong";
    }
    std::vector<Affine> in(n), out(n);
    std::vector<Affine>& result = in_place ? in : out;
    // A fresh input, and the fields both operations share.
    auto reduction = [&] {
      for (std::size_t i = 0; i < n; ++i) in[i] = affine_input(rank, i);
      NodeReduction r;
      r.in = in.data();
      r.count = n;
      r.op = &op;
      r.may_run_ahead = true;
      return r;
    };
    for (int rep = 0; rep < 3; ++rep) {
      NodeReduction r = reduction();
      r.out = rank == receiver ? result.data() : nullptr;
      r.out_hi = rank == receiver ? n : 0;
      r.input_private = rank == receiver;
      std::string failure = g.reduce(info(CollectiveKind::reduce, n, 11), r).text;
      if (!failure.empty()) return failure;
      for (std::size_t i = 0; rank == receiver && i < n; ++i) {
        if (!(result[i] == affine_fold(P - 1, i))) return "reduce " + std::to_string(i);
      }
      NodeReduction s = reduction();
      s.prefix = result.data();
      s.inclusive = inclusive;
      s.input_private = rank == P - 1;
      failure = g.reduce(info(CollectiveKind::scan, n, inclusive ? 12 : 13), s).text;
      if (!failure.empty()) return failure;
      const int upto = inclusive ? rank : rank - 1;
      for (std::size_t i = 0; upto >= 0 && i < n; ++i) {
        if (!(result[i] == affine_fold(upto, i))) return "prefix " + std::to_string(i);
      }
    }
    return {};
  });
  for (int k = 0; k < P; ++k) CHECK(said[k] == "");
}

TEST_CASE("the single-copy path gives what the chunks give, in node rank order",
          "[node][conformance]") {
  // Two processes reach each other's memory in one copy above the inline
  // limit, 16 KiB (128 KiB for a reduce, scan or exscan, which below it
  // take the single copy only by measure, tested below) (these "processes"
  // are threads of one, which process_vm_readv/writev reach as well):
  // around that limit, around 48 KiB (where a single receiver starts to
  // share the fold), around one chunk (256 KiB, the pieces the copies go
  // in), with an odd length, with three processes (never) and with it off.
  constexpr std::size_t kLong = 256 * 1024;
  const bool single = GENERATE(true, false);
  const int P = GENERATE(2, 3);
  const std::size_t n =
      GENERATE(std::size_t{1024}, std::size_t{1025}, std::size_t{3071}, std::size_t{3072},
               std::size_t{9001}, std::size_t{16383}, std::size_t{16384}, std::size_t{40001});
  const CollectiveKind kind = GENERATE(CollectiveKind::reduce, CollectiveKind::allreduce,
                                       CollectiveKind::scan, CollectiveKind::exscan);
  const bool in_place = GENERATE(false, true);
  INFO(P << " processes, " << to_string(kind) << " of " << n << " Affine (16 B)"
         << (in_place ? ", in place" : "") << (single ? "" : ", HREDUCE_NODE_SINGLE_COPY=off"));
  const SingleCopyEnvironment setting(single ? "on" : "off");
  auto said = on_node(
      P,
      [&](NodeGroup& g, int rank) -> std::string {
        if (std::string failure = g.describe("test").text; !failure.empty()) return failure;
        if (g.single_copy() != (single && P > 1)) return "single_copy() is wrong";
        const ErasedOp op = non_throwing_affine();
        for (int root = 0; root < (kind == CollectiveKind::reduce ? P : 1); ++root) {
          std::vector<Affine> in(n), out(n, Affine{0, 0});
          for (std::size_t i = 0; i < n; ++i) in[i] = affine_input(rank, i);
          void* mine = in_place ? static_cast<void*>(in.data()) : out.data();
          const NodeReduction r = reduction_of(kind, in.data(), mine, n, op, rank, root);
          const std::string failure = g.reduce(info(kind, n, 11 + root), r).text;
          if (!failure.empty()) return failure;
          const int upto = received_upto(kind, rank, root, P);
          const std::vector<Affine>& got = in_place ? in : out;
          for (std::size_t i = 0; i < n && upto >= 0; ++i) {
            if (!(got[i] == affine_fold(upto, i)))
              return "root " + std::to_string(root) + ", element " + std::to_string(i);
          }
          // What the process receives nothing in stays as it was.
          if (upto < 0 && !in_place && !(out[0] == Affine{0, 0})) return "wrote to no output";
        }
        return {};
      },
      std::chrono::seconds(30), true, kLong);
  for (int k = 0; k < P; ++k) CHECK(said[k] == "");
}

TEST_CASE("the single copy gives the same at every page offset of the buffers",
          "[node][conformance]") {
  // Where the kernel's copy would crawl (a destination 1-31 bytes past its
  // source in a page: string_copy_crawls), the single copy goes through a
  // buffer of its own at the other side's line offset. The answer of the
  // kernel is set both ways, so both roads run here on any machine; each
  // process places its input and output at its own offsets into pages.
  constexpr std::size_t kLong = 256 * 1024;
  const bool crawls = GENERATE(true, false);
  // {input, output} offsets into a page, for process 0 and process 1.
  const std::vector<std::array<std::size_t, 4>> layouts = {
      {0, 0, 0, 0}, {0, 0, 0, 16}, {0, 16, 48, 0}, {16, 48, 0, 32}, {32, 0, 16, 16}};
  const auto layout = GENERATE_COPY(from_range(layouts));
  const std::size_t n = GENERATE(std::size_t{3072}, std::size_t{40001});
  const CollectiveKind kind = GENERATE(CollectiveKind::reduce, CollectiveKind::allreduce,
                                       CollectiveKind::scan, CollectiveKind::exscan);
  INFO(to_string(kind) << " of " << n << " Affine (16 B), offsets " << layout[0] << "/" << layout[1]
                       << " and " << layout[2] << "/" << layout[3]
                       << (crawls ? ", the kernel's copy crawls" : ""));
  const SingleCopyEnvironment setting("on");
  set_kernel_copies_crawl_misaligned(crawls);
  auto said = on_node(
      2,
      [&](NodeGroup& g, int rank) -> std::string {
        if (std::string failure = g.describe("test").text; !failure.empty()) return failure;
        if (!g.single_copy()) return "no single copy";
        const ErasedOp op = non_throwing_affine();
        // A buffer of n elements `offset` bytes into a page.
        auto placed = [&](std::vector<std::byte>& memory, std::size_t offset) {
          memory.resize(n * sizeof(Affine) + 2 * 4096);
          const auto start = reinterpret_cast<std::uintptr_t>(memory.data());
          return reinterpret_cast<Affine*>((start + 4095) / 4096 * 4096 + offset);
        };
        std::vector<std::byte> in_memory, out_memory;
        Affine* in = placed(in_memory, layout[2 * rank]);
        Affine* out = placed(out_memory, layout[2 * rank + 1]);
        for (int root = 0; root < (kind == CollectiveKind::reduce ? 2 : 1); ++root) {
          for (std::size_t i = 0; i < n; ++i) in[i] = affine_input(rank, i), out[i] = Affine{0, 0};
          const NodeReduction r = reduction_of(kind, in, out, n, op, rank, root);
          const std::string failure = g.reduce(info(kind, n, 21 + root), r).text;
          if (!failure.empty()) return failure;
          const int upto = received_upto(kind, rank, root, 2);
          for (std::size_t i = 0; i < n && upto >= 0; ++i) {
            if (!(out[i] == affine_fold(upto, i)))
              return "root " + std::to_string(root) + ", element " + std::to_string(i);
          }
          if (upto < 0 && !(out[0] == Affine{0, 0})) return "wrote to no output";
        }
        return {};
      },
      std::chrono::seconds(30), true, kLong);
  set_kernel_copies_crawl_misaligned(std::nullopt);
  for (int k = 0; k < 2; ++k) CHECK(said[k] == "");
}

TEST_CASE("calls that switch among buffers each reach their own, slot after slot",
          "[node][conformance]") {
  // An announcement rewrites where the buffers lie only where that
  // changed since its slot's last use (slots recur every kNodeSlots
  // calls): three sets of buffers, each call with inputs of its own,
  // through the single copy and the chunks.
  constexpr std::size_t kLong = 256 * 1024;
  constexpr std::size_t n = 5000;  // 78 KiB of Affine: past the inline sizes
  const bool single = GENERATE(true, false);
  const CollectiveKind kind = GENERATE(CollectiveKind::reduce, CollectiveKind::allreduce,
                                       CollectiveKind::scan, CollectiveKind::exscan);
  INFO(to_string(kind) << (single ? "" : ", HREDUCE_NODE_SINGLE_COPY=off"));
  const SingleCopyEnvironment setting(single ? "on" : "off");
  auto said = on_node(
      2,
      [&](NodeGroup& g, int rank) -> std::string {
        if (std::string failure = g.describe("test").text; !failure.empty()) return failure;
        const ErasedOp op = non_throwing_affine();
        std::vector<Affine> in[3], out[3];
        for (int b = 0; b < 3; ++b) in[b].resize(n), out[b].resize(n);
        const int upto = received_upto(kind, rank, 0, 2);
        for (int call = 0; call < 3 * kNodeSlots; ++call) {
          // The first half of the slots always sees set 0 (nothing to
          // rewrite), the second half set 0, then 1, then 2.
          const int b = call % kNodeSlots < kNodeSlots / 2 ? 0 : call / kNodeSlots % 3;
          for (std::size_t i = 0; i < n; ++i) {
            in[b][i] = affine_input(rank, i + static_cast<std::size_t>(call));
            out[b][i] = Affine{0, 0};
          }
          const NodeReduction r = reduction_of(kind, in[b].data(), out[b].data(), n, op, rank, 0);
          const std::string failure = g.reduce(info(kind, n, 51), r).text;
          if (!failure.empty()) return failure;
          for (std::size_t i = 0; i < n && upto >= 0; ++i) {
            if (!(out[b][i] == affine_fold(upto, i + static_cast<std::size_t>(call))))
              return "call " + std::to_string(call) + ", element " + std::to_string(i);
          }
        }
        return {};
      },
      std::chrono::seconds(60), true, kLong);
  for (int k = 0; k < 2; ++k) CHECK(said[k] == "");
}

TEST_CASE("the single copy's cut moves work to the process that is faster, alike on both",
          "[node][conformance]") {
  // One process folds with a slowed op (the same results): the share of
  // process 0 must move away from the slow one, the same on both
  // processes (the cut is never sent), and every result stays right while
  // the cut moves. A reduce to either root and a scan (whose process 0
  // also copies its input to its prefix).
  constexpr std::size_t kLong = 256 * 1024;
  const int slow = GENERATE(0, 1);
  const CollectiveKind kind = GENERATE(CollectiveKind::reduce, CollectiveKind::scan);
  // Past the inline limit (128 KiB and a KiB), the fold shared.
  constexpr std::size_t n = kNodeInlineOneReceiver / sizeof(Affine) + 64;
  const int root = kind == CollectiveKind::reduce ? GENERATE(0, 1) : 0;
  const int receiver = kind == CollectiveKind::scan ? 1 : root;
  const bool other_copies = kind == CollectiveKind::scan;
  const std::size_t rule = single_copy_cut(n, sizeof(Affine), 1, receiver, other_copies);
  const auto rule_share = static_cast<std::uint32_t>(rule * std::uint64_t{kCutShareUnits} / n);
  INFO(to_string(kind) << " to " << receiver << ", process " << slow << " slow, the rule's cut "
                       << rule << " of " << n);
  const SingleCopyEnvironment setting("on");
  std::uint32_t share[2] = {};
  auto said = on_node(
      2,
      [&](NodeGroup& g, int rank) -> std::string {
        if (std::string failure = g.describe("test").text; !failure.empty()) return failure;
        if (!g.single_copy()) return "no single copy";
        ErasedOp op = rank == slow ? erase_op<Affine>(slow_affine_op) : erase_op<Affine>(affine_op);
        op.may_throw = false;
        std::vector<Affine> in(n), out(n);
        for (std::size_t i = 0; i < n; ++i) in[i] = affine_input(rank, i);
        const int upto = received_upto(kind, rank, root, 2);
        for (std::uint32_t call = 0; call < 4 * kCutRounds; ++call) {
          std::fill(out.begin(), out.end(), Affine{0, 0});
          const NodeReduction r = reduction_of(kind, in.data(), out.data(), n, op, rank, root);
          const std::string failure = g.reduce(info(kind, n, 41), r).text;
          if (!failure.empty()) return failure;
          for (std::size_t i = 0; i < n && upto >= 0; ++i) {
            if (!(out[i] == affine_fold(upto, i)))
              return "call " + std::to_string(call) + ", element " + std::to_string(i);
          }
        }
        share[rank] = g.cut_balance().share(receiver, other_copies, n * sizeof(Affine));
        return {};
      },
      std::chrono::seconds(60), true, kLong);
  for (int k = 0; k < 2; ++k) CHECK(said[k] == "");
  CHECK(share[0] == share[1]);
  // Process 0's share: down where it is the slow one, up where process 1
  // is, by at least one step of the four the calls allowed.
  INFO("process 0's share moved from " << rule_share << " to " << share[0] << " of "
                                       << kCutShareUnits);
  if (slow == 0) {
    CHECK(share[0] < rule_share);
  } else {
    CHECK(share[0] > rule_share);
  }
  CHECK(share[0] != 0);
}

TEST_CASE("with auto two processes race the single copy against the chunks, kind by kind",
          "[node][conformance]") {
  // HREDUCE_NODE_SINGLE_COPY=auto: two processes time both ways for each
  // kind when describe() runs and keep the one with the smaller summed
  // time, every process alike (reduce_scatter_block goes as
  // reduce_scatter); unset (on), `on` and `off` skip the race, and so do
  // three processes (never the single copy). Then a long allreduce, whichever
  // way it took, gives the sequential fold.
  const char* setting = GENERATE(as<const char*>{}, nullptr, "auto", "on", "off");
  const int P = GENERATE(2, 3);
  const bool race = P == 2 && setting != nullptr && std::string(setting) == "auto";
  INFO(P << " processes, HREDUCE_NODE_SINGLE_COPY=" << (setting ? setting : "(unset)"));
  const SingleCopyEnvironment environment(setting);
  constexpr std::size_t n = 40001;
  std::vector<int> took(P, -1);
  auto said = on_node(
      P,
      [&](NodeGroup& g, int rank) -> std::string {
        if (std::string failure = g.describe("test").text; !failure.empty()) return failure;
        const bool allowed = setting == nullptr || std::string(setting) != "off";
        if (g.single_copy() != allowed) return "single_copy() is wrong";
        took[rank] = 0;
        for (CollectiveKind kind :
             {CollectiveKind::allreduce, CollectiveKind::reduce, CollectiveKind::reduce_scatter,
              CollectiveKind::reduce_scatter_block, CollectiveKind::scan, CollectiveKind::exscan}) {
          const std::optional<RaceTimes> times = g.single_copy_race(kind);
          if (times.has_value() != race) return "raced where it should not, or the reverse";
          if (times) {
            if (!(times->single_copy_seconds > 0 && times->chunks_seconds > 0 &&
                  times->single_copy_seconds < 1 && times->chunks_seconds < 1)) {
              return "the race's times are not times";
            }
            if (g.single_copy(kind) != single_copy_won(*times)) return "kept the slower way";
          } else if (g.single_copy(kind) != allowed) {
            // Three processes keep the probe's answer, which node_way ignores.
            return "single_copy(kind) is wrong without a race";
          }
          took[rank] = took[rank] * 2 + (g.single_copy(kind) ? 1 : 0);
        }
        const ErasedOp op = non_throwing_affine();
        std::vector<Affine> in(n), out(n, Affine{0, 0});
        for (std::size_t i = 0; i < n; ++i) in[i] = affine_input(rank, i);
        const NodeReduction r = node_reduction(in.data(), n, op, out.data(), 0, n);
        if (std::string failure = g.reduce(info(CollectiveKind::allreduce, n, 13), r).text;
            !failure.empty()) {
          return failure;
        }
        for (std::size_t i = 0; i < n; ++i) {
          if (!(out[i] == affine_fold(P - 1, i))) return "element " + std::to_string(i);
        }
        return {};
      },
      std::chrono::seconds(30), true, 256 * 1024);
  for (int k = 0; k < P; ++k) CHECK(said[k] == "");
  for (int k = 1; k < P; ++k) CHECK(took[k] == took[0]);
}

TEST_CASE("a second team of the same two processes keeps the first race's verdict", "[node]") {
  // The same pair (here threads of one process, so one pid) and chunk size:
  // the second describe() takes the kept verdict instead of racing again,
  // so its times are the first's to the bit.
  const SingleCopyEnvironment environment("auto");
  std::vector<std::optional<RaceTimes>> seen;
  for (int team = 0; team < 2; ++team) {
    std::vector<std::optional<RaceTimes>> times(2);
    auto said = on_node(
        2,
        [&](NodeGroup& g, int rank) -> std::string {
          if (std::string failure = g.describe("test").text; !failure.empty()) return failure;
          times[rank] = g.single_copy_race(CollectiveKind::scan);
          return {};
        },
        std::chrono::seconds(30), true, 64 * 1024);
    for (int k = 0; k < 2; ++k) CHECK(said[k] == "");
    REQUIRE(times[0].has_value());
    REQUIRE(times[1].has_value());
    CHECK(times[0]->single_copy_seconds == times[1]->single_copy_seconds);
    seen.push_back(times[0]);
  }
  CHECK(seen[0]->single_copy_seconds == seen[1]->single_copy_seconds);
  CHECK(seen[0]->chunks_seconds == seen[1]->chunks_seconds);
}

TEST_CASE("parts of the total through the single copy give what the chunks give",
          "[node][conformance]") {
  // Each of two processes folds its own part, reading the other's input
  // there (reduce_scatter); an output over the input the other reads (MPI's
  // in place, every part at the start) goes through the chunks instead.
  constexpr std::size_t kLong = 256 * 1024;
  const bool single = GENERATE(true, false);
  const int P = GENERATE(2, 3);
  const std::size_t n =
      GENERATE(std::size_t{1024}, std::size_t{1025}, std::size_t{9001}, std::size_t{40001});
  enum Placement { apart, own_elements, at_start };
  const Placement placement = GENERATE(apart, own_elements, at_start);
  INFO(P << " processes, reduce_scatter of " << n << " Affine (16 B), output "
         << (placement == apart          ? "apart"
             : placement == own_elements ? "in place at its elements"
                                         : "in place at the start")
         << (single ? "" : ", HREDUCE_NODE_SINGLE_COPY=off"));
  const SingleCopyEnvironment setting(single ? "on" : "off");
  // Uneven parts, the first the longest.
  auto bound = [&](int q) { return q == 0 ? 0 : q == P ? n : q * n / P + 37; };
  auto said = on_node(
      P,
      [&](NodeGroup& g, int rank) -> std::string {
        if (std::string failure = g.describe("test").text; !failure.empty()) return failure;
        const ErasedOp op = non_throwing_affine();
        const std::size_t lo = bound(rank), hi = bound(rank + 1);
        for (int rep = 0; rep < 2; ++rep) {
          std::vector<Affine> in(n), out(hi - lo, Affine{0, 0});
          for (std::size_t i = 0; i < n; ++i) in[i] = affine_input(rank, i);
          NodeReduction r;
          r.in = in.data();
          r.count = n;
          r.op = &op;
          r.out = placement == apart          ? static_cast<void*>(out.data())
                  : placement == own_elements ? static_cast<void*>(in.data() + lo)
                                              : static_cast<void*>(in.data());
          r.out_lo = lo;
          r.out_hi = hi;
          const std::string failure = g.reduce(info(CollectiveKind::reduce_scatter, n), r).text;
          if (!failure.empty()) return failure;
          const Affine* got = static_cast<const Affine*>(r.out);
          for (std::size_t i = lo; i < hi; ++i) {
            if (!(got[i - lo] == affine_fold(P - 1, i))) return "element " + std::to_string(i);
          }
        }
        return {};
      },
      std::chrono::seconds(30), true, kLong);
  for (int k = 0; k < P; ++k) CHECK(said[k] == "");
}

// Two kinds of calls of `n` elements (Affine, 16 B) in turns, `calls` of
// each, on inputs that change with every call, every result checked
// against the fold, whichever way served it. Each kind's class takes its
// size's way first, then tries the other (src/node/way_by_measure.hpp),
// whichever proves cheaper here: every call was measured, both ways were
// taken, and each the same number of times in both processes.
void check_both_ways_taken_alike(CollectiveKind first, CollectiveKind second, std::size_t n,
                                 int calls) {
  const SingleCopyEnvironment setting(nullptr);
  std::array<std::array<std::uint64_t, 2>, 2> ways{};
  auto said = on_node(2, [&](NodeGroup& g, int rank) -> std::string {
    if (std::string failure = g.describe("test").text; !failure.empty()) return failure;
    if (!g.single_copy()) return "no single copy between the two";
    const ErasedOp op = non_throwing_affine();
    std::vector<Affine> in(n), out(n);
    for (int c = 0; c < 2 * calls; ++c) {
      const CollectiveKind kind = c % 2 == 0 ? first : second;
      const std::size_t shift = static_cast<std::size_t>(c);
      for (std::size_t i = 0; i < n; ++i) in[i] = affine_input(rank, i + shift);
      std::fill(out.begin(), out.end(), Affine{0, 0});
      NodeReduction r = reduction_of(kind, in.data(), out.data(), n, op, rank, 0);
      r.may_run_ahead = true;
      const std::string failure = g.reduce(info(kind, n, 21 + c % 2), r).text;
      if (!failure.empty()) return "call " + std::to_string(c) + ": " + failure;
      const int upto = received_upto(kind, rank, 0, 2);
      for (std::size_t i = 0; i < n && upto >= 0; ++i) {
        if (!(out[i] == affine_fold(upto, i + shift))) {
          return "call " + std::to_string(c) + ", element " + std::to_string(i);
        }
      }
    }
    ways[static_cast<std::size_t>(rank)] = g.measured_calls();
    return {};
  });
  CHECK(said[0] == "");
  CHECK(said[1] == "");
  CHECK(ways[0] == ways[1]);
  CHECK(ways[0][0] + ways[0][1] == static_cast<std::uint64_t>(2 * calls));
  CHECK(ways[0][0] > 0);
  CHECK(ways[0][1] > 0);
}

TEST_CASE("where both ways serve a call, the two processes switch between them alike",
          "[node][conformance]") {
  SECTION("the inline way or the single copy: a reduce and an exscan of 16 KiB") {
    check_both_ways_taken_alike(CollectiveKind::reduce, CollectiveKind::exscan, 1024, 900);
  }
  SECTION("the chunks or the single copy: an allreduce and a scan of 256 KiB") {
    // Above their inline limits (16 and 128 KiB); the scan's single copy
    // with its balanced cut.
    check_both_ways_taken_alike(CollectiveKind::allreduce, CollectiveKind::scan, 16384, 900);
  }
}

TEST_CASE("a node broadcast hands the root's bytes to every process", "[node]") {
  const int P = GENERATE(2, 3);
  const std::size_t bytes = GENERATE(std::size_t{0}, std::size_t{5}, std::size_t{512},
                                     std::size_t{513}, std::size_t{3 * kChunk + 17});
  const int root = P - 1;
  auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
    std::vector<unsigned char> data(bytes, static_cast<unsigned char>(rank));
    if (rank == root) {
      for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(i * 13 + 1);
    }
    const std::string failure =
        g.broadcast(info(CollectiveKind::allreduce, bytes), data.data(), bytes, root).text;
    if (!failure.empty()) return failure;
    for (std::size_t i = 0; i < bytes; ++i) {
      if (data[i] != static_cast<unsigned char>(i * 13 + 1)) return "byte " + std::to_string(i);
    }
    return {};
  });
  for (int k = 0; k < P; ++k) CHECK(said[k] == "");
}

TEST_CASE("failures and disagreements reach every process of the node", "[node][negative]") {
  const int P = 3;
  SECTION("a process that failed already") {
    auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
      NodeCallInfo i = info(CollectiveKind::reduce, 4);
      if (rank == 1)
        i.failure = Failure::of(ErrorKind::argument, "reduce: member 4: root 9 is outside 0..5");
      return g.agree(i).text;
    });
    for (const auto& s : said) {
      CHECK_THAT(s, Catch::Contains("process 1 failed") && Catch::Contains("root 9 is outside"));
    }
  }
  SECTION("a different count") {
    auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
      return g.agree(info(CollectiveKind::allreduce, rank == 2 ? 9 : 8, rank == 2 ? 99 : 7)).text;
    });
    for (const auto& s : said) {
      CHECK_THAT(s, Catch::Contains("processes disagree") &&
                        Catch::Contains("process 2 called "
                                        "allreduce with count 9") &&
                        Catch::Contains("process 0 called allreduce with count 8"));
    }
  }
  SECTION("an op that throws in one process's slice") {
    const auto throwing = make_op<int>([](int a, int b) {
      if (a == 13 || b == 13) throw std::runtime_error("boom: saw 13");
      return a + b;
    });
    auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
      std::vector<int> in(3000, 1), out(3000);
      if (rank == 2) in[2999] = 13;  // in the last process's slice
      const ErasedOp op = erase_op<int>(throwing);
      NodeReduction r;
      r.in = in.data();
      r.count = in.size();
      r.op = &op;
      r.out = out.data();
      r.out_hi = in.size();
      std::string first = g.reduce(info(CollectiveKind::allreduce, 3000), r).text;
      // The node goes on afterwards.
      in[2999] = 1;
      std::string second = g.reduce(info(CollectiveKind::allreduce, 3000), r).text;
      if (second.empty() && out[0] != P) second = "wrong sum after the failure";
      return first + (second.empty() ? "" : " | " + second);
    });
    for (const auto& s : said) {
      CHECK_THAT(s,
                 Catch::Contains("the op threw in process 2") && Catch::Contains("boom: saw 13"));
      CHECK_THAT(s, !Catch::Contains(" | "));
    }
  }
}

// Each process's failure, as "kind|text" (the kind's number), so that a
// check can read both.
std::string kind_and_text(const Failure& f) {
  return f ? std::to_string(static_cast<int>(f.kind)) + "|" + f.text : std::string();
}

std::string kind_prefix(ErrorKind kind) { return std::to_string(static_cast<int>(kind)) + "|"; }

TEST_CASE("every process of the node sees a failure's kind, not only its text",
          "[node][negative]") {
  const int P = 3;
  SECTION("a process that failed already: its own kind") {
    auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
      NodeCallInfo i = info(CollectiveKind::allreduce, 4);
      if (rank == 2) i.failure = Failure::of(ErrorKind::transport, "allreduce: a message was lost");
      return kind_and_text(g.agree(i));
    });
    for (const auto& s : said) {
      CHECK_THAT(s, Catch::StartsWith(kind_prefix(ErrorKind::transport)) &&
                        Catch::Contains("process 2 failed: allreduce: a message was lost"));
    }
  }
  SECTION("counts that differ") {
    auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
      return kind_and_text(g.agree(info(CollectiveKind::allreduce, rank == 1 ? 5 : 4, 7 + rank)));
    });
    for (const auto& s : said) {
      CHECK_THAT(s, Catch::StartsWith(kind_prefix(ErrorKind::count_mismatch)) &&
                        Catch::Contains("processes disagree"));
    }
  }
  SECTION("roots of a reduce that differ") {
    auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
      NodeCallInfo i = info(CollectiveKind::reduce, 4, rank == 2 ? 8 : 7);
      i.root = rank == 2 ? 1 : 0;
      return kind_and_text(g.agree(i));
    });
    for (const auto& s : said) {
      CHECK_THAT(s, Catch::StartsWith(kind_prefix(ErrorKind::root_mismatch)) &&
                        Catch::Contains("process 2 called reduce with count 4, root 1"));
    }
  }
  SECTION("anything else that differs") {
    auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
      NodeCallInfo i = info(CollectiveKind::allreduce, 4, rank == 0 ? 8 : 7);
      if (rank == 0) i.op_name = "max";
      return kind_and_text(g.agree(i));
    });
    for (const auto& s : said) {
      CHECK_THAT(s, Catch::StartsWith(kind_prefix(ErrorKind::mismatch)) &&
                        Catch::Contains("op max") && Catch::Contains("op sum"));
    }
  }
  SECTION("an op that throws") {
    const auto throwing = make_op<int>([](int a, int b) {
      if (a == 13 || b == 13) throw std::runtime_error("boom");
      return a + b;
    });
    auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
      std::vector<int> in(3000, rank == 0 ? 13 : 1), out(3000);
      const ErasedOp op = erase_op<int>(throwing);
      NodeReduction r;
      r.in = in.data();
      r.count = in.size();
      r.op = &op;
      r.out = out.data();
      r.out_hi = in.size();
      return kind_and_text(g.reduce(info(CollectiveKind::allreduce, 3000), r));
    });
    for (const auto& s : said) {
      CHECK_THAT(s, Catch::StartsWith(kind_prefix(ErrorKind::op)) && Catch::Contains("boom"));
    }
  }
}

TEST_CASE("a process that never comes is a timeout naming it, not a hang", "[node][negative]") {
  const auto started = std::chrono::steady_clock::now();
  auto said = on_node(
      2,
      [&](NodeGroup& g, int rank) -> std::string {
        if (rank == 1) return {};
        return g.agree(info(CollectiveKind::allreduce, 1)).text;
      },
      std::chrono::milliseconds(300));
  CHECK_THAT(said[0], Catch::Contains("timed out after 300 ms") && Catch::Contains("process 1"));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
}

TEST_CASE("a process that comes as the deadline passes fails or succeeds with the one that waited",
          "[node][negative]") {
  // Arrivals swept across a 5 ms deadline: whichever side of it a process
  // lands, both processes agree on the outcome of the call.
  int failed = 0, succeeded = 0;
  for (int step = 0; step <= 20; ++step) {
    for (int repeat = 0; repeat < 3; ++repeat) {
      const auto late_by = std::chrono::microseconds(4000 + 100 * step);
      auto said = on_node(
          2,
          [&](NodeGroup& g, int rank) -> std::string {
            if (rank == 1) std::this_thread::sleep_for(late_by);
            return g.agree(info(CollectiveKind::allreduce, 1)).text;
          },
          std::chrono::milliseconds(5));
      INFO("late by " << late_by.count() << " us: " << said[0] << " | " << said[1]);
      CHECK(said[0].empty() == said[1].empty());
      (said[0].empty() ? succeeded : failed) += 1;
    }
  }
  // The sweep straddles the deadline (on a loaded machine mostly late).
  CHECK(failed > 0);
}

namespace {

// A small reduce onto `root`: only the root receives, so the others may
// run ahead. Returns the failure, or a wrong element at the root.
std::string small_reduce(NodeGroup& g, int rank, int root, int call, const char* failure = nullptr,
                         std::uint64_t signature = 7) {
  const std::size_t n = 5;
  std::vector<long> in(n), out(n, -1);
  for (std::size_t i = 0; i < n; ++i) in[i] = input(rank, i) + call;
  const ErasedOp op = erase_op<long>(op::sum);
  NodeReduction r;
  r.in = in.data();
  r.count = n;
  r.op = &op;
  r.out = out.data();
  r.out_hi = rank == root ? n : 0;
  r.may_run_ahead = true;
  NodeCallInfo i = info(CollectiveKind::reduce, n, signature);
  i.root = root;
  if (failure != nullptr) i.failure = Failure::of(ErrorKind::argument, failure);
  const std::string said = g.reduce(i, r).text;
  // The input may change as soon as the call returns (it was copied).
  std::fill(in.begin(), in.end(), -999);
  if (!said.empty() || rank != root) return said;
  for (std::size_t k = 0; k < n; ++k) {
    long all = 0;
    for (int q = 0; q < g.size(); ++q) all += input(q, k) + call;
    if (out[k] != all) return "call " + std::to_string(call) + ", element " + std::to_string(k);
  }
  return {};
}

// A scan (inclusive) or exscan of 3 longs, checked against a loop over
// lower ranks; `failure`: this process's own, announced.
std::string small_scan(NodeGroup& g, int rank, int call, bool inclusive = true,
                       const char* failure = nullptr) {
  const std::size_t n = 3;
  std::vector<long> in(n), prefix(n, -1);
  for (std::size_t i = 0; i < n; ++i) in[i] = input(rank, i) + call;
  const ErasedOp op = erase_op<long>(op::sum);
  NodeReduction r;
  r.in = in.data();
  r.count = n;
  r.op = &op;
  r.prefix = prefix.data();
  r.inclusive = inclusive;
  r.may_run_ahead = true;
  NodeCallInfo i = info(inclusive ? CollectiveKind::scan : CollectiveKind::exscan, n, 9);
  if (failure != nullptr) i.failure = Failure::of(ErrorKind::argument, failure);
  const std::string said = g.reduce(i, r).text;
  std::fill(in.begin(), in.end(), -999);  // copied: the input may change at once
  for (std::size_t i = 0; i < n && said.empty() && (inclusive || rank > 0); ++i) {
    long upto = 0;
    for (int q = 0; q < rank + (inclusive ? 1 : 0); ++q) upto += input(q, i) + call;
    if (prefix[i] != upto)
      return (inclusive ? "scan, call " : "exscan, call ") + std::to_string(call);
  }
  return said;
}

}  // namespace

TEST_CASE("processes that only contribute run ahead and every result stays right",
          "[node][run_ahead]") {
  const int P = GENERATE(2, 3);
  // The root moves every 5 calls; every 11th call is a chunked allreduce
  // and every 13th an exscan, which wait for everyone.
  auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
    for (int call = 0; call < 400; ++call) {
      std::string failure;
      if (call % 11 == 10 || call % 13 == 12) {
        const std::size_t n = call % 11 == 10 ? 3000 : 4;
        std::vector<long> in(n), out(n), prefix(n, -1);
        for (std::size_t i = 0; i < n; ++i) in[i] = input(rank, i);
        const ErasedOp op = erase_op<long>(op::sum);
        NodeReduction r;
        r.in = in.data();
        r.count = n;
        r.op = &op;
        r.out = out.data();
        r.out_hi = call % 11 == 10 ? n : 0;
        r.prefix = call % 11 == 10 ? nullptr : prefix.data();
        failure = g.reduce(info(CollectiveKind::allreduce, n, 8), r).text;
        for (std::size_t i = 0; i < n && failure.empty(); ++i) {
          long all = 0, below = 0;
          for (int q = 0; q < P; ++q) {
            all += input(q, i);
            if (q < rank) below += input(q, i);
          }
          if (r.out_hi > 0 && out[i] != all) failure = "allreduce element " + std::to_string(i);
          if (r.prefix != nullptr && rank > 0 && prefix[i] != below) failure = "exscan prefix";
        }
      } else {
        failure = small_reduce(g, rank, (call / 5) % P, call);
      }
      if (!failure.empty()) return failure;
    }
    return {};
  });
  for (int k = 0; k < P; ++k) CHECK(said[k] == "");
  CHECK(my_segments().empty());
}

TEST_CASE("publishing without a fence loses no wake-up, crowded or not", "[node][run_ahead]") {
  // With the asymmetric fence (asymmetric_fence.hpp) a publisher skips its
  // fence and a waiter about to sleep pays for both. Crowded groups sleep
  // at once, so with 8 "processes" on this machine's cores nearly every
  // wait goes through the sleeping side; a lost wake-up would be a timeout.
  const bool fence = GENERATE(true, false);
  const int P = GENERATE(2, 3, 8);
  INFO(P << " processes" << (fence ? "" : ", HREDUCE_NODE_ASYMMETRIC_FENCE=off"));
  if (fence) {
    unsetenv("HREDUCE_NODE_ASYMMETRIC_FENCE");
  } else {
    setenv("HREDUCE_NODE_ASYMMETRIC_FENCE", "off", 1);
  }
  auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
    if (std::string failure = g.describe("test").text; !failure.empty()) return failure;
    // Where the kernel refuses membarrier, the fence stays, and says so.
    if (g.light_publish() != (fence && register_asymmetric_fence())) {
      return "light_publish() is wrong";
    }
    for (int call = 0; call < 3000; ++call) {
      std::string failure;
      if (call % 7 == 6) {
        failure = small_scan(g, rank, call);  // waits for every lower process
      } else {
        failure = small_reduce(g, rank, (call / 3) % P, call);
      }
      if (!failure.empty()) return failure;
    }
    return {};
  });
  unsetenv("HREDUCE_NODE_ASYMMETRIC_FENCE");
  for (int k = 0; k < P; ++k) CHECK(said[k] == "");
  CHECK(my_segments().empty());
}

TEST_CASE("a scan's processes leave once the processes before them announced",
          "[node][run_ahead]") {
  // The last process comes 300 ms late to every other call; the others
  // need only the processes before them, so they do not wait for it.
  const int P = GENERATE(3, 4, 5);
  INFO(P << " processes");
  auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
    std::string slow;
    for (int call = 0; call < 6; ++call) {
      if (rank == P - 1 && call % 2 == 0) std::this_thread::sleep_for(300ms);
      const auto start = std::chrono::steady_clock::now();
      const std::string failure = small_scan(g, rank, call, call % 4 < 2);
      if (!failure.empty()) return failure;
      const auto took = std::chrono::steady_clock::now() - start;
      if (rank < P - 1 && call % 2 == 0 && took > 200ms) slow += " " + std::to_string(call);
    }
    return slow.empty() ? "" : "waited for the last process in call(s)" + slow;
  });
  for (int k = 0; k < P; ++k) CHECK(said[k] == "");
  CHECK(my_segments().empty());
}

TEST_CASE("scans, exscans and reduces in any mix give every process its prefix",
          "[node][run_ahead]") {
  const int P = GENERATE(2, 3, 5);
  INFO(P << " processes");
  auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
    for (int call = 0; call < 600; ++call) {
      std::string failure;
      switch (call % 5) {
        case 0:
        case 1: failure = small_scan(g, rank, call, true); break;
        case 2:
        case 3: failure = small_scan(g, rank, call, false); break;
        default: failure = small_reduce(g, rank, call % P, call); break;
      }
      if (!failure.empty()) return failure;
    }
    return {};
  });
  for (int k = 0; k < P; ++k) CHECK(said[k] == "");
  CHECK(my_segments().empty());
}

TEST_CASE("inputs past the announcement's own payload travel inline, run ahead or not",
          "[node][run_ahead]") {
  // Two processes: a reduce, scan or exscan of more than 16 KiB goes inline
  // (up to 128 KiB), its input in a place of its own per slot. First 70
  // such reduces to process 0; then, process 1 held back, 70 one-element
  // scans that process 0 runs ahead in, while process 1's slots still hold
  // the long reduces (an experimental build that copied long inputs after
  // the announcement waited there for one of them). Then long calls of
  // every kind and both roots, at lengths around 16 KiB pieces and the
  // limit, each result against the sequential fold.
  const std::vector<std::size_t> lengths = {1025, 2048, 3001, 8191, 8192};
  auto said = on_node(
      2,
      [&](NodeGroup& g, int rank) -> std::string {
        const ErasedOp op = non_throwing_affine();
        auto call = [&](CollectiveKind kind, std::size_t n, int root) -> std::string {
          std::vector<Affine> in(n), out(n, Affine{0, 0});
          for (std::size_t i = 0; i < n; ++i) in[i] = affine_input(rank, i);
          NodeReduction r = reduction_of(kind, in.data(), out.data(), n, op, rank, root);
          r.may_run_ahead = true;
          if (std::string failure = g.reduce(info(kind, n, 21 + root), r).text; !failure.empty()) {
            return failure;
          }
          const int upto = received_upto(kind, rank, root, 2);
          for (std::size_t i = 0; i < n && upto >= 0; ++i) {
            if (!(out[i] == affine_fold(upto, i))) {
              return std::string(to_string(kind)) + " of " + std::to_string(n) + ", element " +
                     std::to_string(i);
            }
          }
          return {};
        };
        for (int k = 0; k < 70; ++k) {
          if (std::string failure = call(CollectiveKind::reduce, 2048, 0); !failure.empty()) {
            return failure;
          }
        }
        if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        for (int k = 0; k < 70; ++k) {
          if (std::string failure = call(CollectiveKind::scan, 1, 0); !failure.empty()) {
            return failure;
          }
        }
        const CollectiveKind kinds[] = {CollectiveKind::reduce, CollectiveKind::scan,
                                        CollectiveKind::exscan};
        for (int k = 0; k < 150; ++k) {
          const std::string failure = call(kinds[k % 3], lengths[k % lengths.size()], k / 3 % 2);
          if (!failure.empty()) return failure;
        }
        return {};
      },
      std::chrono::seconds(10));
  for (int k = 0; k < 2; ++k) CHECK(said[k] == "");
  CHECK(my_segments().empty());
}

TEST_CASE("a scan that fails in its first process fails alike everywhere, the node usable",
          "[node][run_ahead][negative]") {
  // The processes after it would leave once the earlier ones announced,
  // but not when those fail: then all wait, and all see the failure.
  const int P = 4;
  auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
    std::string first = small_scan(g, rank, 1, true, rank == 0 ? "scan: member 0: bad" : nullptr);
    const std::string second = small_scan(g, rank, 2, false);
    return first + (second.empty() ? "" : " | " + second);
  });
  for (const auto& s : said) {
    CHECK_THAT(s, Catch::Contains("process 0 failed: scan: member 0: bad"));
    CHECK_THAT(s, !Catch::Contains(" | ") && !Catch::Contains("no longer usable"));
  }
}

TEST_CASE("a scan that fails after processes left it breaks the node for everyone",
          "[node][run_ahead][negative]") {
  // Process 0 runs ahead, process 1 leaves once 0 announced; process 2's
  // failure then reaches them only as a broken node.
  const int P = 4;
  auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
    std::string text = small_scan(g, rank, 0, true);
    if (!text.empty()) return "first call: " + text;
    try {
      text = small_scan(g, rank, 1, true, rank == 2 ? "scan: member 2: bad" : nullptr);
      if (rank < 2 && !text.empty()) return "second call returned: " + text;
      if (rank >= 2) return text;
      for (int call = 2; call < 2 + kNodeSlots; ++call) {
        text = small_scan(g, rank, call, true);
        if (!text.empty()) return "a later call returned: " + text;
      }
      return "no error in the later calls";
    } catch (const Error& e) {
      return e.what();
    }
  });
  for (int k = 0; k < P; ++k) {
    INFO("process " << k);
    CHECK_THAT(said[k], Catch::Contains("member 2: bad") &&
                            Catch::Contains("process(es) 0, 1 had already returned") &&
                            Catch::Contains("no longer usable"));
  }
  CHECK(my_segments().empty());
}

TEST_CASE("a failed call that some process ran ahead of breaks the node for everyone",
          "[node][run_ahead][negative]") {
  const int P = 3;
  const auto started = std::chrono::steady_clock::now();
  auto said = on_node(P, [&](NodeGroup& g, int rank) -> std::string {
    std::string text = small_reduce(g, rank, 0, 0);
    if (!text.empty()) return "first call: " + text;
    try {
      // The root failed already; processes 1 and 2 only contribute.
      text = small_reduce(g, rank, 0, 1, rank == 0 ? "reduce: member 0: out is null" : nullptr);
      if (!text.empty()) return "second call returned: " + text;
      // A process that ran ahead may run ahead again before the others
      // marked the node broken, but it waits within kNodeSlots calls.
      for (int call = 2; call < 2 + kNodeSlots; ++call) {
        text = small_reduce(g, rank, 0, call);
        if (!text.empty()) return "a later call returned: " + text;
      }
      return "no error in the later calls";
    } catch (const Error& e) {
      return e.what();
    }
  });
  CHECK_THAT(said[0], Catch::Contains("process 0 failed: reduce: member 0: out is null") &&
                          Catch::Contains("process(es) 1, 2 had already returned") &&
                          Catch::Contains("the team is no longer usable"));
  for (int k = 1; k < P; ++k) {
    CHECK_THAT(said[k], Catch::StartsWith("reduce: the team is no longer usable: ") &&
                            Catch::Contains("out is null") && Catch::Contains("1, 2 had"));
  }
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
  CHECK(my_segments().empty());
}

TEST_CASE("processes that all ran ahead of a disagreement learn it a few calls later",
          "[node][run_ahead][negative]") {
  // Each process names the other as the root: both only contribute, so
  // nobody compares that call when it runs, only the digests later.
  auto said = on_node(2, [&](NodeGroup& g, int rank) -> std::string {
    try {
      for (int call = 0; call < 3 * kNodeSlots; ++call) {
        const std::string text = small_reduce(g, rank, 1 - rank, call, nullptr, 70 + rank);
        if (!text.empty()) return "call " + std::to_string(call) + " returned: " + text;
      }
      return "no error";
    } catch (const Error& e) {
      return e.what();
    }
  });
  for (const auto& s : said) {
    CHECK_THAT(
        s, Catch::Contains("disagreed in an earlier call") && Catch::Contains("no longer usable"));
  }
}

TEST_CASE("without run ahead, a failure reaches every process in its own call",
          "[node][run_ahead][negative]") {
  const int P = 3;
  auto said = on_node(
      P,
      [&](NodeGroup& g, int rank) -> std::string {
        const std::string first =
            small_reduce(g, rank, 0, 1, rank == 0 ? "reduce: member 0: out is null" : nullptr);
        // The node goes on.
        const std::string second = small_reduce(g, rank, 0, 2);
        return first + (second.empty() ? "" : " | " + second);
      },
      std::chrono::seconds(30), false);
  for (const auto& s : said) {
    CHECK_THAT(s, Catch::Contains("process 0 failed: reduce: member 0: out is null"));
    CHECK_THAT(s, !Catch::Contains(" | ") && !Catch::Contains("no longer usable"));
  }
}
