// The measurements behind `hreduce probe`, one per file in src/probe/. Each
// runs on this machine (the topology from Topology::discover()), pins its
// threads through the topology interface and returns figures in seconds and
// bytes per second. `seconds` is the time a measurement may take, roughly.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hreduce/topology.hpp"
#include "src/probe/machine.hpp"

namespace hreduce::detail::probe {

// round_trip.cpp: two threads on PUs a and b bounce a counter in one cache
// line; the median over blocks of the time per round trip.
double round_trip_seconds(const Topology& topology, int a, int b, double seconds);
// round_trip.cpp: the same bounce, PU b writing `bytes` before it answers
// and PU a reading them after: seconds per trip (the flag's included).
double round_trip_with_data_seconds(const Topology& topology, int a, int b, std::size_t bytes,
                                    double seconds);
// round_trip.cpp: two threads on PUs a and b each publish a counter in
// their own line and wait for the other's; the median over blocks of the
// time per exchange.
double exchange_seconds(const Topology& topology, int a, int b, double seconds);

// memory_bandwidth.cpp: read, copy and fold (double sum through
// reduce_local) over `bytes_per_thread` per thread, by one thread and by
// one thread per core of each NUMA node, on memory placed on each NUMA
// node. `seconds` is per cell of each matrix; `progress` hears each cell.
MemoryBandwidth memory_bandwidth(const Topology& topology, std::uint64_t bytes_per_thread,
                                 double seconds,
                                 const std::function<void(const std::string&)>& progress);

// memory_bandwidth.cpp: copy and fold by one thread on NUMA node 0 over
// its own buffers of working sets from 4 KiB to 128 MiB, `seconds` each:
// what a call whose buffers stay in a cache level streams at.
std::vector<SizedRate> one_thread_by_size(const Topology& topology, double seconds);

// fold_speed.cpp: reduce_local per op class and element type, on vectors
// that stay in L1/L2.
std::vector<FoldSpeed> fold_speeds(double seconds);

// cross_process.cpp: forks a child (pinned to PU `b`, the parent to `a`)
// for process_vm_readv's cost and a futex wake-up between processes.
CrossProcess cross_process(const Topology& topology, int a, int b, double seconds);

// Shared by the measurements: the median of a non-empty list.
double median(std::vector<double> values);

}  // namespace hreduce::detail::probe
