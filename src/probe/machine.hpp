// The machine description `hreduce probe` writes (docs/machine.md): what a
// model needs to price the steps of a collective on this machine. Every time
// is in seconds and every rate in bytes per second, so that a model
// multiplies and adds without converting units.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hreduce::detail::probe {

inline constexpr const char* kMachineSchema = "hreduce-machine/2";
// Version 1 lacks the by-size curves below; it still reads (a model then
// falls back to the large-buffer figures).
inline constexpr const char* kMachineSchemaWithoutCurves = "hreduce-machine/1";

// How two PUs share the machine, closest first: the innermost level that
// contains both.
enum class Relation { same_core, same_l2, same_l3, same_numa, same_package, across_packages };
inline constexpr int kRelationCount = 6;

// The topology as the measurements saw it (logical indices throughout).
struct PuPlace {
  int os_index = 0;
  int core = -1, l2 = -1, l3 = -1, numa = -1, package = -1;
};
struct MachineTopology {
  std::string source;
  int packages = 0, numa_nodes = 0, l3_caches = 0, cores = 0;
  std::uint64_t l1_bytes = 0, l2_bytes = 0, l3_bytes = 0;  // one cache of the level; 0: unknown
  std::vector<PuPlace> pus;
};

struct PairLatency {
  int a = 0, b = 0;  // logical PU indices, a < b
  Relation relation = Relation::same_core;
  double round_trip_seconds = 0;  // median over blocks of a cache line's round trip
};

struct RelationSummary {
  Relation relation = Relation::same_core;
  int pairs = 0;
  double median_round_trip_seconds = 0;
  // The relation's first pair timed: both PUs publish their own line and
  // wait for the other's at once, as members meeting at a barrier do
  // (between one way and a round trip); 0: not measured.
  double exchange_seconds = 0;
};

// Data one core just wrote, read by another: the seconds a round trip
// takes beyond the bare flag's when the answering side first writes
// `bytes` and the asking side then reads them (the lines travel both ways,
// as an announcement rewritten call after call does).
struct DataTransfer {
  std::uint64_t bytes = 0;
  double seconds = 0;
};

struct CoreToCore {
  bool all_pairs = false;  // false: one pair per relation plus a sample
  std::vector<PairLatency> pairs;
  std::vector<RelationSummary> by_relation;  // only the relations measured
  std::vector<DataTransfer> data_by_size;    // the first pair; empty in version 1
};

// Bytes per second; [from][to]: threads on NUMA node `from`, memory on `to`.
using NumaMatrix = std::vector<std::vector<double>>;
struct MemoryKernels {
  NumaMatrix read, copy, fold;
};
// One thread on NUMA node 0 streaming its own buffers of one size again and
// again: the rate of the cache level that working set lives in (bytes
// counted as in MemoryKernels).
struct SizedRate {
  std::uint64_t working_set_bytes = 0;  // source and target together
  double copy = 0, fold = 0;
};

struct MemoryBandwidth {
  std::uint64_t bytes_per_thread = 0;
  std::vector<SizedRate> one_thread_by_size;  // smallest first; empty in version 1
  MemoryKernels one_thread;
  MemoryKernels node_threads;         // every core of the NUMA node `from`, one thread each
  std::vector<int> threads_per_node;  // how many threads node_threads ran, per NUMA node
};

// reduce_local(in, inout) on L1/L2-resident vectors: inout = in ∘ inout.
struct FoldSpeed {
  std::string op_class;  // sum, max, band, minloc, ...
  std::string type;      // double, float, int32, ...
  int element_bytes = 0;
  double elements_per_second = 0;
  double bytes_per_second = 0;  // 3 × element_bytes × elements_per_second (two reads, one write)
};

struct CrossProcess {
  // process_vm_readv of b bytes costs fixed + per_kib × b / 1024 (least squares).
  std::optional<double> vm_readv_fixed_seconds, vm_readv_seconds_per_kib;
  std::string vm_readv_unavailable;  // why, when the kernel refused
  // A process blocked in FUTEX_WAIT on a shared word until another's FUTEX_WAKE
  // has answered: median and 90th percentile.
  double futex_wake_median_seconds = 0, futex_wake_p90_seconds = 0;
};

// Half the round trip of a ping-pong of `bytes`.
struct MessageTime {
  std::uint64_t bytes = 0;
  double one_way_seconds = 0;
};
struct MpiPair {
  int a = 0, b = 0;  // ranks, a < b
  bool same_node = true;
  double latency_seconds = 0;        // half the round trip of an 8-byte message
  double bytes_per_second = 0;       // one way, from a ping-pong of large messages
  std::vector<MessageTime> by_size;  // smallest first; empty in version 1
  // One exchange of 8 bytes, both ranks sending and receiving at once (a
  // step of recursive doubling or of a ring); 0 where not measured.
  double exchange_seconds = 0;
  // An exchange per size (the sizes of by_size); empty where not measured.
  std::vector<DataTransfer> exchange_by_size;
};
struct MpiLink {
  int pairs = 0;
  double latency_seconds = 0, bytes_per_second = 0;  // medians over the pairs
  std::vector<MessageTime> by_size;                  // the median per size
  double exchange_seconds = 0;                       // the median; 0: not measured
  std::vector<DataTransfer> exchange_by_size;        // the median per size
};
struct MpiPointToPoint {
  int processes = 0, nodes = 0;
  bool virtual_nodes = false;  // nodes from HREDUCE_PROCS_PER_NODE, not from MPI
  std::uint64_t large_message_bytes = 0;
  std::vector<int> node_of_rank;
  std::vector<MpiPair> pairs;
  std::optional<MpiLink> intra_node, inter_node;
};

struct MachineDescription {
  std::string schema = kMachineSchema;
  std::string host, date;  // date: UTC, ISO 8601
  bool quick = false;
  double probe_seconds = 0;
  MachineTopology topology;
  CoreToCore core_to_core;
  MemoryBandwidth memory;
  std::vector<FoldSpeed> fold;
  CrossProcess cross_process;
  std::optional<MpiPointToPoint> mpi;
};

std::string_view to_string(Relation relation);
std::optional<Relation> parse_relation(std::string_view name);

}  // namespace hreduce::detail::probe
