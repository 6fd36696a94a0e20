// Writing and reading the machine description. Field names and units are
// documented in docs/machine.md; change both together, and the schema's
// version when a field changes meaning.
#include "src/probe/machine_json.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "hreduce/error.hpp"
#include "src/probe/json.hpp"

namespace hreduce::detail::probe {
namespace {

using Object = Json::Object;
using Array = Json::Array;

Json matrix_json(const NumaMatrix& m) {
  Array rows;
  for (const auto& row : m) rows.emplace_back(Array(row.begin(), row.end()));
  return rows;
}

NumaMatrix matrix_from(const Json& j, const std::string& what) {
  NumaMatrix m;
  for (const Json& row : j.as_array(what)) {
    m.emplace_back();
    for (const Json& x : row.as_array(what)) m.back().push_back(x.as_number(what));
  }
  return m;
}

Json kernels_json(const MemoryKernels& k) {
  return Object{
      {"read", matrix_json(k.read)}, {"copy", matrix_json(k.copy)}, {"fold", matrix_json(k.fold)}};
}

MemoryKernels kernels_from(const Json& j, const std::string& what) {
  return {matrix_from(j.at("read", what), what + ".read"),
          matrix_from(j.at("copy", what), what + ".copy"),
          matrix_from(j.at("fold", what), what + ".fold")};
}

Json topology_json(const MachineTopology& t) {
  Array pus;
  for (const PuPlace& p : t.pus) {
    pus.emplace_back(Object{{"os_index", p.os_index},
                            {"core", p.core},
                            {"l2", p.l2},
                            {"l3", p.l3},
                            {"numa", p.numa},
                            {"package", p.package}});
  }
  return Object{{"source", t.source},         {"packages", t.packages},
                {"numa_nodes", t.numa_nodes}, {"l3_caches", t.l3_caches},
                {"cores", t.cores},           {"pu_count", static_cast<int>(t.pus.size())},
                {"l1_bytes", t.l1_bytes},     {"l2_bytes", t.l2_bytes},
                {"l3_bytes", t.l3_bytes},     {"pus", std::move(pus)}};
}

MachineTopology topology_from(const Json& j) {
  const std::string w = "topology";
  MachineTopology t;
  t.source = j.at("source", w).as_string(w + ".source");
  t.packages = j.at("packages", w).as_int(w + ".packages");
  t.numa_nodes = j.at("numa_nodes", w).as_int(w + ".numa_nodes");
  t.l3_caches = j.at("l3_caches", w).as_int(w + ".l3_caches");
  t.cores = j.at("cores", w).as_int(w + ".cores");
  t.l1_bytes = static_cast<std::uint64_t>(j.at("l1_bytes", w).as_number(w + ".l1_bytes"));
  t.l2_bytes = static_cast<std::uint64_t>(j.at("l2_bytes", w).as_number(w + ".l2_bytes"));
  t.l3_bytes = static_cast<std::uint64_t>(j.at("l3_bytes", w).as_number(w + ".l3_bytes"));
  for (const Json& p : j.at("pus", w).as_array(w + ".pus")) {
    const std::string pw = w + ".pus[]";
    t.pus.push_back({p.at("os_index", pw).as_int(pw), p.at("core", pw).as_int(pw),
                     p.at("l2", pw).as_int(pw), p.at("l3", pw).as_int(pw),
                     p.at("numa", pw).as_int(pw), p.at("package", pw).as_int(pw)});
  }
  return t;
}

// {bytes, seconds} by size (data between cores, MPI exchanges); absent in
// files written before the curve was measured: empty.
Json transfers_json(const std::vector<DataTransfer>& curve) {
  Array out;
  for (const DataTransfer& t : curve) {
    out.emplace_back(Object{{"bytes", t.bytes}, {"seconds", t.seconds}});
  }
  return out;
}

std::vector<DataTransfer> transfers_from(const Json& j, const std::string& key,
                                         const std::string& w) {
  std::vector<DataTransfer> curve;
  const Json* by_size = j.find(key);
  if (by_size == nullptr) return curve;
  const std::string tw = w + "." + key + "[]";
  for (const Json& t : by_size->as_array(tw)) {
    curve.push_back({static_cast<std::uint64_t>(t.at("bytes", tw).as_number(tw)),
                     t.at("seconds", tw).as_number(tw)});
  }
  return curve;
}

// An exchange (between cores, or MPI ranks); absent in descriptions
// written before it was measured: 0, not measured.
double exchange_from(const Json& j, const std::string& w) {
  const Json* e = j.find("exchange_seconds");
  return e == nullptr ? 0 : e->as_number(w + ".exchange_seconds");
}

Json core_to_core_json(const CoreToCore& c) {
  Array pairs, summary;
  for (const PairLatency& p : c.pairs) {
    pairs.emplace_back(Object{{"a", p.a},
                              {"b", p.b},
                              {"relation", std::string(to_string(p.relation))},
                              {"round_trip_seconds", p.round_trip_seconds}});
  }
  for (const RelationSummary& s : c.by_relation) {
    summary.emplace_back(Object{{"relation", std::string(to_string(s.relation))},
                                {"pairs", s.pairs},
                                {"median_round_trip_seconds", s.median_round_trip_seconds},
                                {"exchange_seconds", s.exchange_seconds}});
  }
  return Object{{"all_pairs", c.all_pairs},
                {"by_relation", std::move(summary)},
                {"pairs", std::move(pairs)},
                {"data_by_size", transfers_json(c.data_by_size)}};
}

Relation relation_from(const Json& j, const std::string& what) {
  const auto r = parse_relation(j.at("relation", what).as_string(what + ".relation"));
  if (!r) throw Error("machine description: " + what + ".relation is not a known relation");
  return *r;
}

CoreToCore core_to_core_from(const Json& j) {
  const std::string w = "core_to_core";
  CoreToCore c;
  c.all_pairs = j.at("all_pairs", w).as_bool(w + ".all_pairs");
  for (const Json& p : j.at("pairs", w).as_array(w + ".pairs")) {
    const std::string pw = w + ".pairs[]";
    c.pairs.push_back({p.at("a", pw).as_int(pw), p.at("b", pw).as_int(pw), relation_from(p, pw),
                       p.at("round_trip_seconds", pw).as_number(pw)});
  }
  for (const Json& s : j.at("by_relation", w).as_array(w + ".by_relation")) {
    const std::string sw = w + ".by_relation[]";
    c.by_relation.push_back({relation_from(s, sw), s.at("pairs", sw).as_int(sw),
                             s.at("median_round_trip_seconds", sw).as_number(sw),
                             exchange_from(s, sw)});
  }
  c.data_by_size = transfers_from(j, "data_by_size", w);
  return c;
}

Json memory_json(const MemoryBandwidth& m) {
  Array by_size;
  for (const SizedRate& r : m.one_thread_by_size) {
    by_size.emplace_back(
        Object{{"working_set_bytes", r.working_set_bytes}, {"copy", r.copy}, {"fold", r.fold}});
  }
  return Object{{"bytes_per_thread", m.bytes_per_thread},
                {"threads_per_node", Array(m.threads_per_node.begin(), m.threads_per_node.end())},
                {"one_thread", kernels_json(m.one_thread)},
                {"node_threads", kernels_json(m.node_threads)},
                {"one_thread_by_size", std::move(by_size)}};
}

MemoryBandwidth memory_from(const Json& j) {
  const std::string w = "memory";
  MemoryBandwidth m;
  m.bytes_per_thread =
      static_cast<std::uint64_t>(j.at("bytes_per_thread", w).as_number(w + ".bytes_per_thread"));
  for (const Json& t : j.at("threads_per_node", w).as_array(w + ".threads_per_node")) {
    m.threads_per_node.push_back(t.as_int(w + ".threads_per_node[]"));
  }
  m.one_thread = kernels_from(j.at("one_thread", w), w + ".one_thread");
  m.node_threads = kernels_from(j.at("node_threads", w), w + ".node_threads");
  if (const Json* by_size = j.find("one_thread_by_size")) {
    const std::string bw = w + ".one_thread_by_size[]";
    for (const Json& r : by_size->as_array(bw)) {
      m.one_thread_by_size.push_back(
          {static_cast<std::uint64_t>(r.at("working_set_bytes", bw).as_number(bw)),
           r.at("copy", bw).as_number(bw), r.at("fold", bw).as_number(bw)});
    }
  }
  return m;
}

Json fold_json(const std::vector<FoldSpeed>& speeds) {
  Array out;
  for (const FoldSpeed& f : speeds) {
    out.emplace_back(Object{{"op_class", f.op_class},
                            {"type", f.type},
                            {"element_bytes", f.element_bytes},
                            {"elements_per_second", f.elements_per_second},
                            {"bytes_per_second", f.bytes_per_second}});
  }
  return out;
}

std::vector<FoldSpeed> fold_from(const Json& j) {
  std::vector<FoldSpeed> out;
  for (const Json& f : j.as_array("fold")) {
    const std::string w = "fold[]";
    out.push_back({f.at("op_class", w).as_string(w), f.at("type", w).as_string(w),
                   f.at("element_bytes", w).as_int(w), f.at("elements_per_second", w).as_number(w),
                   f.at("bytes_per_second", w).as_number(w)});
  }
  return out;
}

Json optional_number(const std::optional<double>& x) { return x ? Json(*x) : Json(); }

Json cross_process_json(const CrossProcess& c) {
  Object out{{"vm_readv_fixed_seconds", optional_number(c.vm_readv_fixed_seconds)},
             {"vm_readv_seconds_per_kib", optional_number(c.vm_readv_seconds_per_kib)}};
  if (!c.vm_readv_unavailable.empty())
    out.emplace_back("vm_readv_unavailable", c.vm_readv_unavailable);
  out.emplace_back("futex_wake_median_seconds", c.futex_wake_median_seconds);
  out.emplace_back("futex_wake_p90_seconds", c.futex_wake_p90_seconds);
  return out;
}

CrossProcess cross_process_from(const Json& j) {
  const std::string w = "cross_process";
  CrossProcess c;
  if (const Json* x = j.find("vm_readv_fixed_seconds")) c.vm_readv_fixed_seconds = x->as_number(w);
  if (const Json* x = j.find("vm_readv_seconds_per_kib"))
    c.vm_readv_seconds_per_kib = x->as_number(w);
  if (const Json* x = j.find("vm_readv_unavailable")) c.vm_readv_unavailable = x->as_string(w);
  c.futex_wake_median_seconds = j.at("futex_wake_median_seconds", w).as_number(w);
  c.futex_wake_p90_seconds = j.at("futex_wake_p90_seconds", w).as_number(w);
  return c;
}

}  // namespace

namespace {

Json curve_json(const std::vector<MessageTime>& curve) {
  Array out;
  for (const MessageTime& t : curve) {
    out.emplace_back(Object{{"bytes", t.bytes}, {"one_way_seconds", t.one_way_seconds}});
  }
  return out;
}

// Absent in version 1: an empty curve.
std::vector<MessageTime> curve_from(const Json& j, const std::string& w) {
  std::vector<MessageTime> curve;
  const Json* by_size = j.find("one_way_by_size");
  if (by_size == nullptr) return curve;
  for (const Json& t : by_size->as_array(w + ".one_way_by_size")) {
    curve.push_back({static_cast<std::uint64_t>(t.at("bytes", w).as_number(w)),
                     t.at("one_way_seconds", w).as_number(w)});
  }
  return curve;
}

Json link_json(const std::optional<MpiLink>& link) {
  if (!link) return Json();
  return Object{{"pairs", link->pairs},
                {"latency_seconds", link->latency_seconds},
                {"bytes_per_second", link->bytes_per_second},
                {"one_way_by_size", curve_json(link->by_size)},
                {"exchange_seconds", link->exchange_seconds},
                {"exchange_by_size", transfers_json(link->exchange_by_size)}};
}

std::optional<MpiLink> link_from(const Json* j, const std::string& w) {
  if (j == nullptr) return std::nullopt;
  return MpiLink{j->at("pairs", w).as_int(w),
                 j->at("latency_seconds", w).as_number(w),
                 j->at("bytes_per_second", w).as_number(w),
                 curve_from(*j, w),
                 exchange_from(*j, w),
                 transfers_from(*j, "exchange_by_size", w)};
}

Json mpi_json(const std::optional<MpiPointToPoint>& mpi) {
  if (!mpi) return Json();
  Array pairs;
  for (const MpiPair& p : mpi->pairs) {
    pairs.emplace_back(Object{{"a", p.a},
                              {"b", p.b},
                              {"same_node", p.same_node},
                              {"latency_seconds", p.latency_seconds},
                              {"bytes_per_second", p.bytes_per_second},
                              {"one_way_by_size", curve_json(p.by_size)},
                              {"exchange_seconds", p.exchange_seconds},
                              {"exchange_by_size", transfers_json(p.exchange_by_size)}});
  }
  return Object{{"processes", mpi->processes},
                {"nodes", mpi->nodes},
                {"virtual_nodes", mpi->virtual_nodes},
                {"large_message_bytes", mpi->large_message_bytes},
                {"node_of_rank", Array(mpi->node_of_rank.begin(), mpi->node_of_rank.end())},
                {"intra_node", link_json(mpi->intra_node)},
                {"inter_node", link_json(mpi->inter_node)},
                {"pairs", std::move(pairs)}};
}

std::optional<MpiPointToPoint> mpi_from(const Json* j) {
  if (j == nullptr) return std::nullopt;
  const std::string w = "mpi";
  MpiPointToPoint m;
  m.processes = j->at("processes", w).as_int(w + ".processes");
  m.nodes = j->at("nodes", w).as_int(w + ".nodes");
  m.virtual_nodes = j->at("virtual_nodes", w).as_bool(w + ".virtual_nodes");
  m.large_message_bytes =
      static_cast<std::uint64_t>(j->at("large_message_bytes", w).as_number(w + ".large"));
  for (const Json& n : j->at("node_of_rank", w).as_array(w + ".node_of_rank")) {
    m.node_of_rank.push_back(n.as_int(w + ".node_of_rank[]"));
  }
  m.intra_node = link_from(j->find("intra_node"), w + ".intra_node");
  m.inter_node = link_from(j->find("inter_node"), w + ".inter_node");
  for (const Json& p : j->at("pairs", w).as_array(w + ".pairs")) {
    const std::string pw = w + ".pairs[]";
    m.pairs.push_back({p.at("a", pw).as_int(pw), p.at("b", pw).as_int(pw),
                       p.at("same_node", pw).as_bool(pw), p.at("latency_seconds", pw).as_number(pw),
                       p.at("bytes_per_second", pw).as_number(pw), curve_from(p, pw),
                       exchange_from(p, pw), transfers_from(p, "exchange_by_size", pw)});
  }
  return m;
}

}  // namespace

std::string to_json(const MachineDescription& m) {
  const Json document = Object{{"schema", m.schema},
                               {"host", m.host},
                               {"date", m.date},
                               {"quick", m.quick},
                               {"probe_seconds", m.probe_seconds},
                               {"topology", topology_json(m.topology)},
                               {"core_to_core", core_to_core_json(m.core_to_core)},
                               {"memory", memory_json(m.memory)},
                               {"fold", fold_json(m.fold)},
                               {"cross_process", cross_process_json(m.cross_process)},
                               {"mpi", mpi_json(m.mpi)}};
  return document.dump() + "\n";
}

MachineDescription machine_from_json(std::string_view text) {
  const Json j = Json::parse(text);
  MachineDescription m;
  m.schema = j.at("schema", "the document").as_string("schema");
  if (m.schema != kMachineSchema && m.schema != kMachineSchemaWithoutCurves) {
    throw Error("machine description: schema \"" + m.schema + "\", this hreduce reads \"" +
                kMachineSchema + "\" and \"" + kMachineSchemaWithoutCurves + "\"");
  }
  m.host = j.at("host", "the document").as_string("host");
  m.date = j.at("date", "the document").as_string("date");
  m.quick = j.at("quick", "the document").as_bool("quick");
  m.probe_seconds = j.at("probe_seconds", "the document").as_number("probe_seconds");
  m.topology = topology_from(j.at("topology", "the document"));
  m.core_to_core = core_to_core_from(j.at("core_to_core", "the document"));
  m.memory = memory_from(j.at("memory", "the document"));
  m.fold = fold_from(j.at("fold", "the document"));
  m.cross_process = cross_process_from(j.at("cross_process", "the document"));
  m.mpi = mpi_from(j.find("mpi"));
  return m;
}

void write_text_file(const std::string& path, const std::string& text, const char* command) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    throw Error(std::string(command) + ": cannot write " + path + ": " + std::strerror(errno));
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  if (std::fclose(file) != 0 || !written) {
    throw Error(std::string(command) + ": cannot write " + path + ": " + std::strerror(errno));
  }
}

}  // namespace hreduce::detail::probe
