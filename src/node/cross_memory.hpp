// Reading and writing another process's memory in one copy (Linux
// cross-memory attach, process_vm_readv(2) and process_vm_writev), as MPI
// libraries do for long messages within a node: the node level's
// single-copy path (node_group.hpp) reads a peer's private input and writes
// its private output directly, where the shared segment would copy them in
// and out.
//
// The kernel allows it between processes of one user unless Yama's
// ptrace_scope restricts it to descendants, or a seccomp policy (some
// containers) forbids the calls. Every process therefore opts in, and the
// node tries one read and one write of each peer before relying on them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace hreduce::detail {

// Lets any process of this user read and write this process's memory where
// Yama would otherwise allow only ancestors; does nothing where there is no
// Yama. Once per process.
void allow_cross_memory_reads();

// Copies `bytes` at `remote` in process `pid` to `local`. False, with the
// reason in `why`, when the kernel refuses or the range is not all mapped.
bool read_process_memory(int pid, const void* remote, void* local, std::size_t bytes,
                         std::string& why);
// Copies `bytes` at `local` to `remote` in process `pid`; as above.
bool write_process_memory(int pid, void* remote, const void* local, std::size_t bytes,
                          std::string& why);

// Whether the kernel's copies behind these two crawl between buffers that
// string_copy_crawls() (src/common/copy.hpp) names, as on AMD Zen 3: timed
// once per process on its own memory, 16 KiB read into a destination 16
// bytes past the source modulo a page against one a whole page past it
// (slower by half again or more: it crawls). About 0.1 ms, when the
// node level first exposes the process (PeerMemory::expose).
bool kernel_copies_crawl_misaligned();
// Tests: sets the answer (nullopt: time it again at the next question).
void set_kernel_copies_crawl_misaligned(std::optional<bool> answer);

}  // namespace hreduce::detail
