// The machines `hreduce predict` knows by name, and the topology of any
// machine description as the runtime's Topology (for its tree builder and
// placement). Built-in machines are an hwloc synthetic string plus figures
// from public sources, each approximate; docs/model.md cites them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hreduce/topology.hpp"
#include "src/probe/machine.hpp"

namespace hreduce::detail::model {

struct BuiltinMachine {
  const char* name;
  const char* synthetic;  // hwloc synthetic topology
  const char* summary;    // one line for --help and the report
};
const std::vector<BuiltinMachine>& builtin_machines();

// "2x64", "1x192"; throws ArgumentError naming the machines known.
probe::MachineDescription builtin_machine(const std::string& name);

// "this" (probed now, --quick), a built-in name, or a probe JSON file.
probe::MachineDescription load_machine(const std::string& name_or_file,
                                       const std::function<void(const std::string&)>& progress);

// The description's PUs as a Topology (not this system: nothing binds).
Topology topology_of(const probe::MachineTopology& topology);

}  // namespace hreduce::detail::model
