// What one step of a collective costs on a described machine: the figures
// of a machine description (docs/machine.md) turned into prices, with the
// fallback each one takes where the description has no figure (a field
// that could not be measured, a relation the probe did not time). Every
// price is in seconds, every rate in bytes of the *vector* per second: a
// fold of n bytes reads 2n and writes n, so the description's fold rates,
// which count all three, are divided by 3 here once.
#pragma once

#include <cstddef>
#include <string>

#include "src/probe/machine.hpp"

namespace hreduce::detail::model {

// The three kinds of streaming the probe measured.
enum class Stream { read, copy, fold };

class MachinePrices {
 public:
  explicit MachinePrices(probe::MachineDescription machine);

  const probe::MachineDescription& machine() const { return machine_; }
  const probe::MachineTopology& topology() const { return machine_.topology; }
  int numa_nodes() const;
  int numa_of_pu(int pu) const;
  probe::Relation relation(int pu_a, int pu_b) const;

  // Half the cache-line round trip between the two PUs' relation: what a
  // member pays to see another's store.
  double one_way_seconds(probe::Relation relation) const;
  double one_way_seconds(int pu_a, int pu_b) const { return one_way_seconds(relation(pu_a, pu_b)); }

  // Vector bytes per second of one thread on NUMA node `from` streaming
  // memory on `to`, and of all threads of `from` together (what they share).
  double one_thread_rate(Stream kind, int from, int to) const;
  double node_rate(Stream kind, int from, int to) const;

  // Vector bytes per second of reduce_local on cache-resident data for an
  // op class and element type ("sum", "double"); the double sum when the
  // pair was not measured.
  double fold_rate(const std::string& op_class, const std::string& type) const;
  // Bytes per second of a copy between caches (the cache-resident fold's
  // rate stands in: it moves 3 bytes per vector byte at the same speed).
  double cached_copy_rate() const;
  // Bytes that fit in the caches a process's members share (the L3s of the
  // NUMA nodes involved); above it a stream goes to memory.
  std::uint64_t last_level_cache_bytes() const;

  // Vector bytes per second of one thread whose buffers (source and target
  // together: `working_set` bytes) stay where the probe's by-size curve
  // found that working set: interpolated between the sizes measured. 0
  // where there is no curve or the working set lies beyond it: then the
  // memory matrices price the stream, shared with the NUMA node's others.
  double cached_rate(Stream kind, double working_set) const;
  // The same for a working set that the last-level cache holds but the
  // curve does not reach: the curve's largest size stands in (not the
  // cache-resident fold's speed, several times too fast there).
  double cached_rate_within_curve(Stream kind, double working_set) const;

  // Reading `bytes` another core wrote since (its lines move to this one):
  // the probe's data_by_size, linear between its sizes and past the last;
  // 0 where the description has none.
  double data_from_another_core_seconds(double bytes) const;

  // One process_vm_readv/writev of `bytes`; whether the kernel allows it.
  double single_copy_seconds(std::size_t bytes) const;
  bool single_copy_available() const;
  double futex_wake_seconds() const;

  // An MPI message of `bytes` between processes of one node, and between nodes.
  double mpi_intra_latency() const;
  double mpi_intra_rate() const;
  double mpi_inter_latency() const;
  double mpi_inter_rate() const;
  // One MPI message of `bytes` one way (between nodes or within one): the
  // probe's by-size curve, interpolated, and past its largest size that
  // size's time plus the rest at the link's rate; without a curve, latency
  // plus bytes over the rate.
  double message_seconds(double bytes, bool between_nodes) const;
  // One exchange of a small message, both sides sending at once (the
  // probe's `exchange_seconds`); 0 where the description has none.
  double exchange_seconds(bool between_nodes) const;
  // An exchange of `bytes` each way (the probe's `exchange_by_size`); 0
  // where the description has no such curve.
  double exchange_by_size_seconds(double bytes, bool between_nodes) const;

 private:
  double matrix_rate(const probe::NumaMatrix& matrix, int from, int to) const;
  const probe::MpiLink* mpi_link(bool between_nodes) const;  // nullptr: not measured

  probe::MachineDescription machine_;
};

}  // namespace hreduce::detail::model
