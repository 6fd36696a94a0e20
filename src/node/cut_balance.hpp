// The single copy's cut for a fold that one process receives (reduce,
// scan), balanced by what each side's part costs here
// (node_single_copy.cpp).
//
// single_copy_cut's rule guesses the receiver's share, and the right share
// depends on the machine: on the Intel VM a 256 KiB reduce balanced with
// 62.5 % of the vector at the receiver, where the rule gave it 61.6 % and
// the receiver then waited a tenth of the call for the other (docs/mpi.md).
// So every process keeps process 0's share per way of sharing and per size
// (powers of two), starting from the rule. After each single copy both
// processes hold both processes' busy times (each writes its own before it
// releases the other's buffers); every kCutRounds copies of one way and
// size, both move its share alike from the sums. No share is ever sent:
// every process sees the same times in the same order, since both run the
// single copy of every operation of the node. Halves (an allreduce's two
// folds, an exscan's copy) stay halves: their sides do the same work, and
// on the Intel VM an exscan of 512 KiB ran 7 % slower 2 % off the half.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace hreduce::detail {

// Shares of the vector in units of 1/kCutShareUnits.
inline constexpr std::uint32_t kCutShareUnits = 1u << 16;
// Copies whose times are summed before a share moves: one copy's times
// vary by a tenth from call to call on the VMs.
inline constexpr std::uint32_t kCutRounds = 32;

// Process 0's next share after copies in which it did `share` and the two
// processes were busy `busy0` and `busy1` (in any one unit): halfway to
// where their times would have been equal had each grown with its share,
// by at most 1/64 of the vector and within [1/16, 15/16]; the same where
// the times differ by less than 1/64 of the longer. At balance the target
// is the share itself, whatever fixed costs either side has.
std::uint32_t balanced_share(std::uint32_t share, std::uint64_t busy0, std::uint64_t busy1);

class CutBalance {
 public:
  // Where process 0's part of `count` elements ends, for one receiver
  // (`receiver`, and `other_copies`: the other also copies its input to
  // its scan prefix): `rule_cut` until this way and size has been
  // measured, then the balanced share on a cache line where the element
  // size allows. A rule that gives everything to one process stands.
  std::size_t cut(int receiver, bool other_copies, std::size_t count, std::size_t elem_size,
                  std::size_t rule_cut);

  // After a single copy of `bytes` per process cut by cut() here with the
  // same receiver and other_copies.
  void observe(int receiver, bool other_copies, std::size_t bytes, std::uint64_t busy0,
               std::uint64_t busy1);

  // Process 0's share now (in 1/kCutShareUnits) for a single copy of
  // `bytes` per process, for tests and explanations; 0 before the first.
  std::uint32_t share(int receiver, bool other_copies, std::size_t bytes) const {
    return entries_[index(receiver, other_copies, bytes)].share;
  }

  // Every share back to the rule (the node's processes restart together).
  void reset() { entries_.fill(Entry{}); }

 private:
  struct Entry {
    std::uint32_t share = 0;  // 0: not cut yet
    std::uint32_t rounds = 0;
    std::uint64_t busy0 = 0, busy1 = 0;
  };
  static constexpr int kSizes = 64;  // by the bit width of the bytes
  static std::size_t index(int receiver, bool other_copies, std::size_t bytes);
  std::array<Entry, 4 * kSizes> entries_{};
};

}  // namespace hreduce::detail
