// describe()'s race: whether the single copy pays on this machine.
//
// Reading the other process's memory (process_vm_readv/writev) saves the
// chunks' second copy, but what one such call costs depends on the machine:
// on a quiet Intel server the single copy beat the chunks 1.3–3.3× at
// 64–256 KiB, on a 2-vCPU virtual machine each call cost about five
// memcpys of its bytes and the chunks won 1.3–1.9× at 32 KiB – 1 MiB
// (docs/mpi.md). No constant serves both, so the two processes time one
// allreduce each way, in turns, and all keep the way that took less time
// summed over them (single_copy_won), so that every process switches alike.
#include <algorithm>
#include <chrono>
#include <limits>
#include <vector>

#include "hreduce/team.hpp"
#include "src/common/failure.hpp"
#include "src/node/node_areas.hpp"
#include "src/node/node_group.hpp"
#include "src/node/node_way.hpp"

namespace hreduce::detail {

Failure NodeGroup::race_single_copy() {
  constexpr std::size_t kCount = kNodeRaceBytes / sizeof(double);
  std::vector<double> in(kCount, 1.0), out(kCount, 0.0);
  static const ErasedOp sum = erase_op<double>(op::sum);
  NodeReduction r;
  r.in = in.data();
  r.count = kCount;
  r.op = &sum;
  r.out = out.data();
  r.out_hi = kCount;
  NodeCallInfo info;
  info.signature = 0x72616365ull;  // every process races alike
  info.kind = CollectiveKind::allreduce;
  info.count = kCount;
  info.type_name = "double";
  info.op_name = "sum";
  RaceTimes best{std::numeric_limits<double>::infinity(),
                 std::numeric_limits<double>::infinity()};
  // The warm-up touches the pages first: the buffers and, as each call
  // takes the ring's next chunk, every chunk of the ring (else the chunks
  // would pay their page faults here, about 5x their time, and never again).
  const int warm_up = 1 + static_cast<int>(buffers_);
  for (int round = -warm_up; round < kNodeRaceRounds; ++round) {
    for (const bool single : {true, false}) {
      if (single && round < -1) continue;
      single_copy_ = single;
      const auto start = std::chrono::steady_clock::now();
      const Failure failure = reduce(info, r);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (failure) {
        // Every process sees the same failure: a single copy the kernel
        // refused after all leaves the chunks, anything else fails the team.
        single_copy_ = false;
        return failure.kind == ErrorKind::transport ? Failure{} : failure;
      }
      double& kept = single ? best.single_copy_seconds : best.chunks_seconds;
      if (round >= 0) kept = std::min(kept, seconds);
    }
  }
  ProcessArea& me = area(rank_);
  me.race_single_copy_seconds = best.single_copy_seconds;
  me.race_chunks_seconds = best.chunks_seconds;
  info = NodeCallInfo{};
  info.signature = 0x72616365642eull;
  info.kind = CollectiveKind::barrier;
  info.type_name = info.op_name = "none";
  if (Failure failure = agree(info)) {
    single_copy_ = false;
    return failure;
  }
  RaceTimes summed;
  for (int q = 0; q < size_; ++q) {
    summed.single_copy_seconds += area(q).race_single_copy_seconds;
    summed.chunks_seconds += area(q).race_chunks_seconds;
  }
  single_copy_ = single_copy_won(summed);
  race_ = summed;
  return {};
}

}  // namespace hreduce::detail
