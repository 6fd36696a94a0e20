// Reaching another process's private memory: how the node level's single
// copy (node_single_copy.cpp) reads a peer's input and writes its output
// where they lie, so that each byte moves once instead of into the shared
// segment and out again.
//
// A mechanism answers three questions, the shape MPI libraries give their
// single-copy components: may this process be reached at all (expose(),
// once per process), an endpoint to one peer (endpoint(pid)), and copies
// from and to that peer's memory through it. Today there is one mechanism,
// Linux cross-memory attach (process_vm_readv/writev, cross_memory.hpp),
// which needs nothing from the peer but its pid. One that maps a peer's
// pages (XPMEM) or borrows its file descriptors (pidfd_getfd) would keep
// its per-peer state in its endpoint and slot in behind make_peer_memory()
// without the single copy changing. Whether a mechanism works between two
// given processes (Yama, seccomp) only a try tells: describe() reads and
// writes a word of every peer before the node relies on it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace hreduce::detail {

// One peer process, as this process reaches it. False, with the reason in
// `why`, where the kernel refuses or the range is not all mapped.
class PeerEndpoint {
 public:
  virtual ~PeerEndpoint() = default;
  // `bytes` at `remote` in the peer to `local`.
  virtual bool copy_from(const void* remote, void* local, std::size_t bytes, std::string& why) = 0;
  // `bytes` at `local` to `remote` in the peer.
  virtual bool copy_to(void* remote, const void* local, std::size_t bytes, std::string& why) = 0;
  // Whether a copy to `to` from `from` (either side's addresses) would take
  // this machine's slow road (string_copy_crawls in src/common/copy.hpp),
  // so that the caller goes through a buffer at the other side's offset.
  virtual bool copy_crawls(const void* to, const void* from) const = 0;
};

class PeerMemory {
 public:
  virtual ~PeerMemory() = default;
  virtual std::string_view name() const = 0;
  // Lets the node's other processes reach this process's memory; false
  // where this mechanism cannot work here at all.
  virtual bool expose() = 0;
  virtual std::unique_ptr<PeerEndpoint> endpoint(int pid) = 0;
};

// The mechanism this build uses: cross-memory attach.
std::unique_ptr<PeerMemory> make_peer_memory();

}  // namespace hreduce::detail
