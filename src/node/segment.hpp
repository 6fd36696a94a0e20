// Memory that the processes of one node map at once: the node level's
// control words and staging buffers live here.
//
// Named segments come from shm_open and are unlinked as soon as every
// process of the node has mapped them, so no /dev/shm file outlives the
// processes, whatever way they end (only a process killed between its
// shm_open and the unlink, a window of a few messages, could leave one).
// We do not use MPI_Win_allocate_shared: its MPI_Win_free is collective,
// and a team whose peer died must still be destroyed without hanging.
#pragma once

#include <cstddef>
#include <string>

namespace hreduce::detail {

class Channel;

class SharedSegment {
 public:
  SharedSegment() = default;
  SharedSegment(SharedSegment&& other) noexcept { *this = std::move(other); }
  SharedSegment& operator=(SharedSegment&& other) noexcept;
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;
  ~SharedSegment();

  // Zeroed memory shared with the children this process forks later, never
  // named (tests of the node level across processes).
  static SharedSegment anonymous(std::size_t bytes);
  // Collective over the processes of one node (`node` connects exactly
  // them): participant `creator` creates a zeroed segment of `bytes` (the
  // others' `bytes` is ignored), every participant maps it, and its name is
  // gone before any of them returns.
  static SharedSegment for_node(Channel& node, std::size_t bytes, int creator = 0);

  void* data() const { return data_; }
  std::size_t size() const { return bytes_; }

 private:
  static SharedSegment map(int fd, std::size_t bytes, const std::string& what);
  // for_node's two sides: the creator's, and every other participant's.
  static SharedSegment create_for_node(Channel& node, std::size_t bytes);
  static SharedSegment attach_for_node(Channel& node, int creator);

  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// Names this process gave its segments start with this; a file with this
// prefix whose creator (the number after it) is gone is a leak.
inline constexpr const char* kSegmentPrefix = "hreduce.";

}  // namespace hreduce::detail
