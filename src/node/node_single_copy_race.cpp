// describe()'s race (HREDUCE_NODE_SINGLE_COPY=auto): whether the single
// copy pays on this machine, for each kind of call.
//
// Reading the other process's memory (process_vm_readv/writev) saves the
// chunks' second copy, but what one such call costs depends on the machine:
// on a quiet Intel server the single copy beat the chunks 1.3–3.3× at
// 64–256 KiB; on a 2-vCPU virtual machine the chunks were up to 1.3× faster
// while the host's cores were close, and 2–5× slower while they were far
// (docs/mpi.md). Where the machine holds still, timing both ways settles
// it: the two processes time one call of each kind each way, in turns, and
// all keep, per kind, the way that took less time summed over them
// (single_copy_won), so that every process switches alike. Not the
// default: a race sees only the phase the machine is in while the team is
// built.
#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "hreduce/team.hpp"
#include "src/common/failure.hpp"
#include "src/node/node_areas.hpp"
#include "src/node/node_group.hpp"
#include "src/node/node_way.hpp"

namespace hreduce::detail {

namespace {

// The verdicts of this process's races so far, by the pair of processes
// (in node rank order) and chunk size: a race costs a few milliseconds, and
// a program may build a team per communicator over the same two processes.
struct RaceKey {
  int first_pid, second_pid;
  std::size_t chunk_bytes;
  auto operator<=>(const RaceKey&) const = default;
};
struct RaceVerdict {
  std::uint8_t chunks_won = 0;
  std::array<std::optional<RaceTimes>, 8> races;
};
std::mutex verdicts_mutex;
std::map<RaceKey, RaceVerdict> verdicts;

}  // namespace

Failure NodeGroup::race_kind(CollectiveKind kind, RaceTimes& best) {
  constexpr std::size_t kCount = kNodeRaceBytes / sizeof(double);
  std::vector<double> in(kCount, 1.0), out(kCount, 0.0);
  static const ErasedOp sum = erase_op<double>(op::sum);
  const bool scans = kind == CollectiveKind::scan || kind == CollectiveKind::exscan;
  NodeReduction r = scans ? node_reduction(in.data(), kCount, sum)
                          : node_reduction(in.data(), kCount, sum, out.data(), 0, kCount);
  if (scans) {
    r.prefix = out.data();
    r.inclusive = kind == CollectiveKind::scan;
  } else if (kind == CollectiveKind::reduce) {  // to process 0
    r.out_hi = rank_ == 0 ? kCount : 0;
  } else if (kind == CollectiveKind::reduce_scatter) {  // a half each
    r.out_lo = rank_ == 0 ? 0 : kCount / 2;
    r.out_hi = rank_ == 0 ? kCount / 2 : kCount;
  }
  NodeCallInfo info;
  info.signature = 0x7261636500ull + static_cast<std::uint64_t>(kind);  // alike everywhere
  info.kind = kind;
  info.count = kCount;
  info.type_name = "double";
  info.op_name = "sum";
  best = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  // The warm-up touches the pages first: the buffers and, in the first
  // kind's, as each call takes the ring's next chunk, every chunk of the
  // ring (else the chunks would pay their page faults here, about 5x their
  // time, and never again).
  const int warm_up = kind == kNodeRacedKinds[0] ? 1 + static_cast<int>(buffers_) : 1;
  for (int round = -warm_up; round < kNodeRaceRounds; ++round) {
    for (const bool single : {true, false}) {
      if (single && round < -1) continue;
      chunks_won_ = single ? 0 : kind_bit(kind);
      const auto start = std::chrono::steady_clock::now();
      const Failure failure = reduce(info, r);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (failure) return failure;
      double& kept = single ? best.single_copy_seconds : best.chunks_seconds;
      if (round >= 0) kept = std::min(kept, seconds);
    }
  }
  return {};
}

std::uint32_t NodeGroup::known_race_verdict() const {
  if (size_ != 2) return 0;
  const std::lock_guard lock(verdicts_mutex);
  const auto found = verdicts.find({pid(0), pid(1), chunk_});
  return found == verdicts.end() ? 0 : 0x100u | found->second.chunks_won;
}

Failure NodeGroup::race_single_copy() {
  const RaceKey key{pid(0), pid(1), chunk_};
  const std::uint32_t known = area(0).race_known;
  if (known != 0 && area(1).race_known == known) {
    const std::lock_guard lock(verdicts_mutex);
    chunks_won_ = static_cast<std::uint8_t>(known & 0xff);
    races_ = verdicts.at(key).races;  // this process found it there
    return {};
  }
  ProcessArea& me = area(rank_);
  for (const CollectiveKind kind : kNodeRacedKinds) {
    const Failure failure = race_kind(kind, me.race[std::countr_zero(kind_bit(kind))]);
    if (failure) {
      // Every process sees the same failure: a single copy the kernel
      // refused after all leaves the chunks, anything else fails the team.
      single_copy_ = false;
      chunks_won_ = 0;
      return failure.kind == ErrorKind::transport ? Failure{} : failure;
    }
  }
  NodeCallInfo info;
  info.signature = 0x72616365642eull;
  info.kind = CollectiveKind::barrier;
  info.type_name = info.op_name = "none";
  chunks_won_ = 0;
  if (Failure failure = agree(info)) {
    single_copy_ = false;
    return failure;
  }
  for (const CollectiveKind kind : kNodeRacedKinds) {
    const int bit = std::countr_zero(kind_bit(kind));
    RaceTimes summed;
    for (int q = 0; q < size_; ++q) {
      summed.single_copy_seconds += area(q).race[bit].single_copy_seconds;
      summed.chunks_seconds += area(q).race[bit].chunks_seconds;
    }
    if (!single_copy_won(summed)) chunks_won_ |= kind_bit(kind);
    races_[static_cast<std::size_t>(bit)] = summed;
  }
  const std::lock_guard lock(verdicts_mutex);
  verdicts[key] = {chunks_won_, races_};
  return {};
}

}  // namespace hreduce::detail
