// Bulk copies of the engine. Not std::memcpy: glibc 2.36 switches to
// `rep movsb` above 2 KiB, and on AMD Zen (seen on this project's EPYC
// machines) that runs at about a tenth of the memory bandwidth for common
// source/destination alignments. A plain 64-byte-block loop compiles to
// vector moves. The attribute
// keeps GCC from turning the loop back into a memcpy call.
//
// Also the address arithmetic on raw buffers of elements that the engine,
// the node level, the hybrid layer and the inter-process algorithms share.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hreduce::detail {

template <std::size_t Width>
struct Block {
  unsigned char bytes[Width];
};

template <std::size_t Width>
inline void move_block(unsigned char* d, const unsigned char* s) {
  Block<Width> block;
  __builtin_memcpy(&block, s, Width);
  __builtin_memcpy(d, &block, Width);
}

// Two moves of `Width` bytes, the second ending at the last byte: together
// they copy any length in [Width, 2·Width] without a loop or a byte tail.
template <std::size_t Width>
inline void copy_head_and_tail(unsigned char* d, const unsigned char* s, std::size_t bytes) {
  move_block<Width>(d, s);
  move_block<Width>(d + bytes - Width, s + bytes - Width);
}

// More than 64 bytes. Out of line: GCC inlines no function whose
// optimisation options differ from its caller's, except into a flattened
// one (lone_member.cpp), where the loop became a call to memcpy and a
// 64 KiB reduce on two processes took twice as long: hence noinline.
[[gnu::optimize("no-tree-loop-distribute-patterns"), gnu::noinline]] inline void copy_blocks(
    unsigned char* d, const unsigned char* s, std::size_t bytes) {
  std::size_t i = 0;
  for (; i + 64 <= bytes; i += 64) move_block<64>(d + i, s + i);
  // The tail as the last 64 bytes, overlapping what the loop already copied.
  if (i < bytes) move_block<64>(d + bytes - 64, s + bytes - 64);
}

// Small collectives copy a few elements on every call: a handful of inline
// instructions for them, not a call, a loop and a chain of tail moves.
inline void copy_bytes(void* to, const void* from, std::size_t bytes) {
  auto* d = static_cast<unsigned char*>(to);
  const auto* s = static_cast<const unsigned char*>(from);
  if (bytes > 64) return copy_blocks(d, s, bytes);
  if (bytes >= 32) return copy_head_and_tail<32>(d, s, bytes);
  if (bytes >= 16) return copy_head_and_tail<16>(d, s, bytes);
  if (bytes >= 8) return copy_head_and_tail<8>(d, s, bytes);
  if (bytes >= 4) return copy_head_and_tail<4>(d, s, bytes);
  if (bytes >= 2) return copy_head_and_tail<2>(d, s, bytes);
  if (bytes == 1) *d = *s;
}

// Whether a string copy (`rep movsb`) from `from` to `to` takes the slow
// road on CPUs that have one: on AMD Zen 3 (this project's EPYC machines)
// a 32 KiB memcpy ran 15x slower, and process_vm_readv/writev (the kernel
// copies that way too) 3x, whenever the destination lay 1-31 bytes past
// the source modulo a 4 KiB page (bench/string_copy_alignment.cpp prints
// the table). glibc 2.36's memcpy takes that road above 2 KiB: hence
// copy_bytes. Where the kernel copies, a buffer placed at the other side's
// offset in its 64-byte line (at_line_offset_of) never does.
inline bool string_copy_crawls(const void* to, const void* from) {
  const std::uintptr_t distance =
      (reinterpret_cast<std::uintptr_t>(to) - reinterpret_cast<std::uintptr_t>(from)) % 4096;
  return distance > 0 && distance < 32;
}

// The address in `buffer` (which has 64 bytes to spare) at `like`'s offset
// in its 64-byte line: no copy between the two crawls.
inline std::byte* at_line_offset_of(std::byte* buffer, const void* like) {
  const auto b = reinterpret_cast<std::uintptr_t>(buffer) % 64;
  const auto l = reinterpret_cast<std::uintptr_t>(like) % 64;
  return buffer + (l + 64 - b) % 64;
}

// copy_bytes, skipped when to == from; pointers may be null when bytes == 0.
inline void copy_if_distinct(void* to, const void* from, std::size_t bytes) {
  if (to != from && bytes > 0) copy_bytes(to, from, bytes);
}

// Element `index` of a raw buffer of `elem_size`-byte elements.
inline std::byte* bytes_at(void* base, std::size_t index, std::size_t elem_size) {
  return static_cast<std::byte*>(base) + index * elem_size;
}
inline const std::byte* bytes_at(const void* base, std::size_t index, std::size_t elem_size) {
  return static_cast<const std::byte*>(base) + index * elem_size;
}

}  // namespace hreduce::detail
