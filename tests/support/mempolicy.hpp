// What the kernel says about the pages of an address, asked directly
// (get_mempolicy and move_pages system calls), as an oracle independent of
// hwloc, through which hreduce binds memory.
#pragma once

#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <optional>

namespace hreduce::test {

// The policy of the page holding `address`: its mode (MPOL_BIND, ...) and
// the OS indices of its nodes as a bit mask (nodes 0..63). nullopt where
// the kernel does not answer (no NUMA support, a seccomp filter).
struct PagePolicy {
  int mode = -1;
  std::uint64_t nodes = 0;
};

inline std::optional<PagePolicy> page_policy(const void* address) {
  int mode = -1;
  unsigned long mask[16] = {};  // room for 1024 nodes; the kernel wants maxnode >= its own
  const long got = syscall(SYS_get_mempolicy, &mode, mask, sizeof mask * 8, address, MPOL_F_ADDR);
  if (got != 0) return std::nullopt;
  return PagePolicy{mode, mask[0]};
}

// The OS index of the node holding the page at `address`, which the caller
// has written: move_pages with no target nodes only reports. nullopt where
// the kernel does not answer; a negative errno where it answers that.
inline std::optional<int> page_node(const void* address) {
  void* page = const_cast<void*>(address);
  int status = -1;
  if (syscall(SYS_move_pages, 0, 1UL, &page, nullptr, &status, 0) != 0) return std::nullopt;
  return status;
}

}  // namespace hreduce::test
