// The machine description's JSON: every field written is read back equal,
// the schema is checked, and a missing or mistyped field is named.
#include <cmath>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include "hreduce/error.hpp"
#include "src/probe/heatmap_svg.hpp"
#include "src/probe/json.hpp"
#include "src/probe/machine_json.hpp"

namespace pr = hreduce::detail::probe;

namespace {

pr::MachineDescription sample(bool with_mpi) {
  pr::MachineDescription m;
  m.host = "node \"a\"\\1\n";  // quotes, a backslash and a control character
  m.date = "2026-11-25T22:00:00Z";
  m.quick = true;
  m.probe_seconds = 7.25;
  m.topology = {"synthetic: pack:1 core:2 pu:1",           1, 1, 1, 2, 32768, 1 << 20, 1 << 25,
                {{0, 0, -1, 0, 0, 0}, {1, 1, -1, 0, 0, 0}}};
  m.core_to_core.all_pairs = true;
  m.core_to_core.pairs = {{0, 1, pr::Relation::same_l3, 1.234567890123e-7}};
  m.core_to_core.by_relation = {{pr::Relation::same_l3, 1, 1.234567890123e-7, 9.87654321e-8}};
  m.memory.bytes_per_thread = 64u << 20;
  m.memory.threads_per_node = {2};
  m.memory.one_thread = {{{9.5e9}}, {{7.25e9}}, {{1.1e10}}};
  m.memory.node_threads = {{{1.5e10}}, {{1.25e10}}, {{2e10}}};
  m.memory.one_thread_by_size = {{4096, 2e11, 3e11}, {128u << 20, 1e10, 1.5e10}};
  m.core_to_core.data_by_size = {{512, 2e-7}, {8192, 1.5e-6}};
  m.fold = {{"sum", "double", 8, 2.5e9, 6e10}, {"minloc", "double_int", 16, 3e8, 1.44e10}};
  m.cross_process.vm_readv_fixed_seconds = 3.2e-6;
  m.cross_process.vm_readv_seconds_per_kib = 8.8e-8;
  m.cross_process.futex_wake_median_seconds = 4.9e-5;
  m.cross_process.futex_wake_p90_seconds = 7.6e-5;
  if (with_mpi) {
    pr::MpiPointToPoint mpi;
    mpi.processes = 3;
    mpi.nodes = 2;
    mpi.virtual_nodes = true;
    mpi.large_message_bytes = 1 << 20;
    mpi.node_of_rank = {0, 0, 1};
    const std::vector<pr::MessageTime> curve = {{8, 1e-6}, {16 << 20, 4e-3}};
    const std::vector<pr::DataTransfer> exchanges = {{8, 1.5e-6}, {16 << 20, 7.5e-3}};
    mpi.pairs = {{0, 1, true, 1e-6, 5e9, curve, 1.5e-6, exchanges},
                 {0, 2, false, 2e-6, 4e9, curve, 2.5e-6, exchanges},
                 {1, 2, false, 3e-6, 3e9, curve, 3.5e-6, exchanges}};
    mpi.intra_node = pr::MpiLink{1, 1e-6, 5e9, curve, 1.5e-6, exchanges};
    mpi.inter_node = pr::MpiLink{
        2, 2.5e-6, 3.5e9, {{8, 2.5e-6}, {16 << 20, 5e-3}}, 3e-6, {{8, 3e-6}, {16 << 20, 9e-3}}};
    m.mpi = mpi;
  }
  return m;
}

void check_equal(const pr::MachineDescription& a, const pr::MachineDescription& b) {
  CHECK(a.schema == b.schema);
  CHECK(a.host == b.host);
  CHECK(a.date == b.date);
  CHECK(a.quick == b.quick);
  CHECK(a.probe_seconds == b.probe_seconds);
  CHECK(a.topology.source == b.topology.source);
  CHECK(a.topology.cores == b.topology.cores);
  CHECK(a.topology.l3_bytes == b.topology.l3_bytes);
  REQUIRE(a.topology.pus.size() == b.topology.pus.size());
  for (std::size_t i = 0; i < a.topology.pus.size(); ++i) {
    CHECK(a.topology.pus[i].os_index == b.topology.pus[i].os_index);
    CHECK(a.topology.pus[i].core == b.topology.pus[i].core);
    CHECK(a.topology.pus[i].l2 == b.topology.pus[i].l2);
  }
  REQUIRE(a.core_to_core.pairs.size() == b.core_to_core.pairs.size());
  CHECK(a.core_to_core.pairs[0].relation == b.core_to_core.pairs[0].relation);
  // 17 significant digits: doubles come back bit for bit.
  CHECK(a.core_to_core.pairs[0].round_trip_seconds == b.core_to_core.pairs[0].round_trip_seconds);
  CHECK(a.core_to_core.by_relation[0].median_round_trip_seconds ==
        b.core_to_core.by_relation[0].median_round_trip_seconds);
  CHECK(a.core_to_core.by_relation[0].exchange_seconds ==
        b.core_to_core.by_relation[0].exchange_seconds);
  REQUIRE(a.core_to_core.data_by_size.size() == b.core_to_core.data_by_size.size());
  for (std::size_t i = 0; i < a.core_to_core.data_by_size.size(); ++i) {
    CHECK(a.core_to_core.data_by_size[i].bytes == b.core_to_core.data_by_size[i].bytes);
    CHECK(a.core_to_core.data_by_size[i].seconds == b.core_to_core.data_by_size[i].seconds);
  }
  CHECK(a.memory.bytes_per_thread == b.memory.bytes_per_thread);
  CHECK(a.memory.threads_per_node == b.memory.threads_per_node);
  CHECK(a.memory.one_thread.copy == b.memory.one_thread.copy);
  CHECK(a.memory.node_threads.fold == b.memory.node_threads.fold);
  REQUIRE(a.memory.one_thread_by_size.size() == b.memory.one_thread_by_size.size());
  for (std::size_t i = 0; i < a.memory.one_thread_by_size.size(); ++i) {
    CHECK(a.memory.one_thread_by_size[i].working_set_bytes ==
          b.memory.one_thread_by_size[i].working_set_bytes);
    CHECK(a.memory.one_thread_by_size[i].copy == b.memory.one_thread_by_size[i].copy);
    CHECK(a.memory.one_thread_by_size[i].fold == b.memory.one_thread_by_size[i].fold);
  }
  REQUIRE(a.fold.size() == b.fold.size());
  CHECK(a.fold[1].op_class == b.fold[1].op_class);
  CHECK(a.fold[1].element_bytes == b.fold[1].element_bytes);
  CHECK(a.fold[1].elements_per_second == b.fold[1].elements_per_second);
  CHECK(a.cross_process.vm_readv_fixed_seconds == b.cross_process.vm_readv_fixed_seconds);
  CHECK(a.cross_process.vm_readv_seconds_per_kib == b.cross_process.vm_readv_seconds_per_kib);
  CHECK(a.cross_process.vm_readv_unavailable == b.cross_process.vm_readv_unavailable);
  CHECK(a.cross_process.futex_wake_p90_seconds == b.cross_process.futex_wake_p90_seconds);
  REQUIRE(a.mpi.has_value() == b.mpi.has_value());
  if (!a.mpi) return;
  CHECK(a.mpi->node_of_rank == b.mpi->node_of_rank);
  CHECK(a.mpi->virtual_nodes == b.mpi->virtual_nodes);
  REQUIRE(a.mpi->pairs.size() == b.mpi->pairs.size());
  CHECK(a.mpi->pairs[2].same_node == b.mpi->pairs[2].same_node);
  CHECK(a.mpi->pairs[2].bytes_per_second == b.mpi->pairs[2].bytes_per_second);
  REQUIRE(a.mpi->inter_node.has_value() == b.mpi->inter_node.has_value());
  CHECK(a.mpi->inter_node->latency_seconds == b.mpi->inter_node->latency_seconds);
  for (auto [x, y] : {std::pair{a.mpi->inter_node->by_size, b.mpi->inter_node->by_size},
                      {a.mpi->pairs[1].by_size, b.mpi->pairs[1].by_size}}) {
    REQUIRE(x.size() == y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      CHECK(x[i].bytes == y[i].bytes);
      CHECK(x[i].one_way_seconds == y[i].one_way_seconds);
    }
  }
  CHECK(a.mpi->pairs[2].exchange_seconds == b.mpi->pairs[2].exchange_seconds);
  for (auto [x, y] :
       {std::pair{a.mpi->inter_node->exchange_by_size, b.mpi->inter_node->exchange_by_size},
        {a.mpi->pairs[1].exchange_by_size, b.mpi->pairs[1].exchange_by_size}}) {
    REQUIRE(x.size() == y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      CHECK(x[i].bytes == y[i].bytes);
      CHECK(x[i].seconds == y[i].seconds);
    }
  }
}

}  // namespace

TEST_CASE("the machine description reads back what was written", "[probe]") {
  for (bool with_mpi : {false, true}) {
    const pr::MachineDescription m = sample(with_mpi);
    const std::string text = pr::to_json(m);
    INFO(text);
    check_equal(m, pr::machine_from_json(text));
  }
}

TEST_CASE("an unavailable process_vm_readv is written as null with its reason", "[probe]") {
  pr::MachineDescription m = sample(false);
  m.cross_process.vm_readv_fixed_seconds.reset();
  m.cross_process.vm_readv_seconds_per_kib.reset();
  m.cross_process.vm_readv_unavailable = "process_vm_readv: Operation not permitted";
  const std::string text = pr::to_json(m);
  CHECK(text.find("\"vm_readv_fixed_seconds\": null") != std::string::npos);
  check_equal(m, pr::machine_from_json(text));
}

TEST_CASE("the JSON names its schema and the fields a model reads", "[probe]") {
  const pr::Json j = pr::Json::parse(pr::to_json(sample(true)));
  CHECK(j.at("schema", "doc").as_string("schema") == "hreduce-machine/2");
  for (const char* field : {"host", "date", "quick", "probe_seconds", "topology", "core_to_core",
                            "memory", "fold", "cross_process", "mpi"}) {
    INFO(field);
    CHECK(j.find(field) != nullptr);
  }
  const pr::Json& pair = j.at("core_to_core", "doc").at("pairs", "c").as_array("p")[0];
  CHECK(pair.at("relation", "p").as_string("r") == "same_l3");
  CHECK(j.at("mpi", "doc").at("pairs", "m").as_array("p").size() == 3u);
  // No MPI: the field is null.
  CHECK(pr::Json::parse(pr::to_json(sample(false))).find("mpi") == nullptr);
}

TEST_CASE("a version 1 description, without the by-size curves, still reads", "[probe]") {
  std::string text = pr::to_json(sample(true));
  text.replace(text.find("hreduce-machine/2"), 17, "hreduce-machine/1");
  const pr::MachineDescription m = pr::machine_from_json(text);
  CHECK(m.schema == "hreduce-machine/1");
  // Written without them (as version 1 was), the curves come back empty.
  pr::MachineDescription plain = sample(true);
  plain.memory.one_thread_by_size.clear();
  plain.core_to_core.data_by_size.clear();
  for (pr::MpiPair& p : plain.mpi->pairs) p.by_size.clear();
  plain.mpi->intra_node->by_size.clear();
  plain.mpi->inter_node->by_size.clear();
  std::string v1 = pr::to_json(plain);
  v1.replace(v1.find("hreduce-machine/2"), 17, "hreduce-machine/1");
  const pr::MachineDescription back = pr::machine_from_json(v1);
  CHECK(back.memory.one_thread_by_size.empty());
  CHECK(back.mpi->inter_node->by_size.empty());
}

TEST_CASE("a description written before exchanges between cores were timed reads them as 0",
          "[probe]") {
  std::string text = pr::to_json(sample(false));
  const std::string field = "\"exchange_seconds\": ";
  const std::size_t at = text.find(field, text.find("\"by_relation\""));
  REQUIRE(at != std::string::npos);
  REQUIRE(at < text.find("\"data_by_size\""));  // in by_relation, not under mpi
  // Drop the field with its value and the comma before it.
  const std::size_t end = text.find_first_of(",}", at + field.size());
  text.erase(text.rfind(',', at), end - text.rfind(',', at));
  const pr::MachineDescription m = pr::machine_from_json(text);
  REQUIRE(m.core_to_core.by_relation.size() == 1);
  CHECK(m.core_to_core.by_relation[0].exchange_seconds == 0);
  CHECK(m.core_to_core.by_relation[0].median_round_trip_seconds == 1.234567890123e-7);
}

TEST_CASE("another schema, a missing field or a wrong kind is refused by name", "[probe]") {
  std::string text = pr::to_json(sample(false));
  std::string other = text;
  other.replace(other.find("hreduce-machine/2"), 17, "hreduce-machine/9");
  CHECK_THROWS_WITH(pr::machine_from_json(other), Catch::Contains("hreduce-machine/9"));
  std::string missing = text;
  missing.replace(missing.find("\"cores\""), 7, "\"kernels\"");
  CHECK_THROWS_WITH(pr::machine_from_json(missing), Catch::Contains("\"cores\""));
  std::string wrong = text;
  wrong.replace(wrong.find("\"quick\": true"), 13, "\"quick\": 1");
  CHECK_THROWS_WITH(pr::machine_from_json(wrong), Catch::Contains("quick"));
  CHECK_THROWS_WITH(pr::machine_from_json(text.substr(0, text.size() / 2)),
                    Catch::Contains("invalid JSON"));
}

TEST_CASE("numbers JSON cannot hold are written as null", "[probe]") {
  const pr::Json j = pr::Json::Array{pr::Json(std::numeric_limits<double>::infinity()),
                                     pr::Json(std::nan("")), pr::Json(0.1), pr::Json(-3)};
  CHECK(j.dump() == "[null, null, 0.10000000000000001, -3]");
  const pr::Json back = pr::Json::parse(j.dump());
  CHECK(back.as_array("a")[0].is_null());
  CHECK(back.as_array("a")[2].as_number("x") == 0.1);
}

TEST_CASE("the heatmaps have a panel per matrix", "[probe]") {
  auto panels = [](const std::string& svg) {
    int n = 0;
    for (std::size_t at = 0; (at = svg.find("<g transform", at)) != std::string::npos; ++at) ++n;
    return n;
  };
  // Round trips, then read/copy/fold for one thread and for a node's cores.
  CHECK(panels(pr::heatmaps_svg(sample(false))) == 7);
  const std::string with_mpi = pr::heatmaps_svg(sample(true));
  CHECK(panels(with_mpi) == 9);  // and MPI latency and bandwidth
  CHECK(with_mpi.find("MPI latency") != std::string::npos);
  CHECK(with_mpi.find(">123</text>") != std::string::npos);  // the round trip in ns, in its cell
  CHECK(with_mpi.rfind("</svg>\n") == with_mpi.size() - 7);
}
