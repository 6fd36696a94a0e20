#include "src/node/segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>

#include "hreduce/error.hpp"
#include "src/transport/channel.hpp"
#include "src/transport/tags.hpp"

namespace hreduce::detail {
namespace {

std::string system_error(const std::string& what) {
  return "node segment: " + what + ": " + std::strerror(errno);
}

std::string fresh_name() {
  static std::atomic<unsigned> teams{0};
  std::random_device entropy;
  return "/" + std::string(kSegmentPrefix) + std::to_string(getpid()) + "." +
         std::to_string(teams.fetch_add(1)) + "." + std::to_string(entropy());
}

// The name travels with the segment's size; shm names are short.
struct NameMessage {
  char text[128] = {};
  std::uint64_t bytes = 0;
};

}  // namespace

SharedSegment& SharedSegment::operator=(SharedSegment&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(data_, bytes_);
    data_ = other.data_;
    bytes_ = other.bytes_;
    other.data_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

SharedSegment::~SharedSegment() {
  if (data_ != nullptr) munmap(data_, bytes_);
}

SharedSegment SharedSegment::map(int fd, std::size_t bytes, const std::string& what) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | (fd < 0 ? MAP_ANONYMOUS : 0),
                 fd, 0);
  if (p == MAP_FAILED)
    throw TransportError(
        system_error("mmap of " + std::to_string(bytes) + " bytes (" + what + ")"));
  SharedSegment s;
  s.data_ = p;
  s.bytes_ = bytes;
  return s;
}

SharedSegment SharedSegment::anonymous(std::size_t bytes) { return map(-1, bytes, "anonymous"); }

// The creator's side of for_node: creates and maps the segment, tells the
// others its name (an empty one: creation failed), and unlinks it once
// every other has answered whether it mapped it.
SharedSegment SharedSegment::create_for_node(Channel& node, std::size_t bytes) {
  NameMessage name;
  name.bytes = bytes;
  std::strncpy(name.text, fresh_name().c_str(), sizeof name.text - 1);
  SharedSegment segment;
  std::string failure;
  const int fd = shm_open(name.text, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    failure = system_error(std::string("shm_open ") + name.text);
  } else {
    if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      failure = system_error("ftruncate to " + std::to_string(bytes) + " bytes");
    } else {
      try {
        segment = map(fd, bytes, name.text);
      } catch (const Error& e) {
        failure = e.what();
      }
    }
    close(fd);
    if (!failure.empty()) shm_unlink(name.text);
  }
  if (!failure.empty()) name.text[0] = '\0';
  const int me = node.rank();
  for (int q = 0; q < node.size(); ++q) {
    if (q != me) node.send(q, &name, sizeof name, tags::segment_name);
  }
  int attached_everywhere = 1;
  for (int q = 0; q < node.size(); ++q) {
    if (q == me) continue;
    int attached = 0;
    node.recv(q, &attached, sizeof attached, tags::segment_attached);
    attached_everywhere &= attached;
  }
  if (name.text[0] != '\0') shm_unlink(name.text);
  for (int q = 0; q < node.size(); ++q) {
    if (q != me)
      node.send(q, &attached_everywhere, sizeof attached_everywhere, tags::segment_ready);
  }
  if (!failure.empty()) throw TransportError(failure);
  if (!attached_everywhere)
    throw TransportError("node segment: another process of the node could not map " +
                         std::string(name.text));
  return segment;
}

// The others' side: maps the segment the creator names, says whether it
// did, and waits until the creator has heard from everyone.
SharedSegment SharedSegment::attach_for_node(Channel& node, int creator) {
  NameMessage name;
  SharedSegment segment;
  std::string failure;
  node.recv(creator, &name, sizeof name, tags::segment_name);
  int attached = 0;
  if (name.text[0] != '\0') {
    const int fd = shm_open(name.text, O_RDWR, 0600);
    if (fd < 0) {
      failure = system_error(std::string("shm_open ") + name.text);
    } else {
      try {
        segment = map(fd, static_cast<std::size_t>(name.bytes), name.text);
        attached = 1;
      } catch (const Error& e) {
        failure = e.what();
      }
      close(fd);
    }
  } else {
    failure =
        "node segment: process " + std::to_string(creator) + " of the node could not create it";
  }
  node.send(creator, &attached, sizeof attached, tags::segment_attached);
  int attached_everywhere = 0;
  node.recv(creator, &attached_everywhere, sizeof attached_everywhere, tags::segment_ready);
  if (!failure.empty()) throw TransportError(failure);
  if (!attached_everywhere)
    throw TransportError("node segment: another process of the node could not map it");
  return segment;
}

SharedSegment SharedSegment::for_node(Channel& node, std::size_t bytes, int creator) {
  return node.rank() == creator ? create_for_node(node, bytes) : attach_for_node(node, creator);
}

}  // namespace hreduce::detail
