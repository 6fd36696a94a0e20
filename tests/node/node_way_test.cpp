// How the node level moves a reduction's data, as a pure function: the
// inline sizes per process count and collective, the single copy's gates,
// and an op that may throw, against hand-computed thresholds.
#include "src/node/node_way.hpp"

#include <catch2/catch.hpp>

namespace hreduce::detail {

TEST_CASE("inputs travel inline up to 16 KiB over the other processes") {
  CHECK(node_inline_bytes(1, CollectiveKind::allreduce) == 16384);
  CHECK(node_inline_bytes(2, CollectiveKind::allreduce) == 16384);
  // One process receives: it folds or copies from the announcement.
  CHECK(node_inline_bytes(2, CollectiveKind::reduce) == 131072);
  CHECK(node_inline_bytes(2, CollectiveKind::scan) == 131072);
  CHECK(node_inline_bytes(2, CollectiveKind::exscan) == 131072);
  CHECK(node_inline_bytes(2, CollectiveKind::reduce_scatter) == 16384);
  CHECK(node_inline_bytes(3, CollectiveKind::scan) == 8192);
  CHECK(node_inline_bytes(3, CollectiveKind::reduce) == 8192);
  CHECK(node_inline_bytes(4, CollectiveKind::exscan) == 5440);  // 16384 / 3 on whole lines
  CHECK(node_inline_bytes(33, CollectiveKind::allreduce) == 512);
  CHECK(node_inline_bytes(64, CollectiveKind::allreduce) == 512);  // the floor
}

TEST_CASE("the single copy: two processes, past the inline size, from 16 KiB") {
  const NodeShape two{2, 256 << 10, true};
  CHECK(node_way(CollectiveKind::allreduce, 16384, 8, false, two) == NodeWay::inline_announcement);
  CHECK(node_way(CollectiveKind::allreduce, 16392, 8, false, two) == NodeWay::single_copy);
  CHECK(node_way(CollectiveKind::reduce, 131072, 8, false, two) == NodeWay::inline_announcement);
  CHECK(node_way(CollectiveKind::reduce, 131080, 8, false, two) == NodeWay::single_copy);
  // Refused by the kernel or switched off; three processes; a huge element.
  CHECK(node_way(CollectiveKind::allreduce, 1 << 20, 8, false, {2, 256 << 10, false}) ==
        NodeWay::chunks);
  CHECK(node_way(CollectiveKind::allreduce, 1 << 20, 8, false, {3, 256 << 10, true}) ==
        NodeWay::chunks);
  CHECK(node_way(CollectiveKind::allreduce, 1 << 20, 8192, false, {2, 4096, true}) ==
        NodeWay::chunks);
  // A process that wants the node's total and its prefix both (a scan
  // across nodes) takes the chunks; inline is unaffected.
  CHECK(node_way(CollectiveKind::scan, 1 << 20, 8, false, two, true) == NodeWay::chunks);
  CHECK(node_way(CollectiveKind::scan, 64, 8, false, two, true) == NodeWay::inline_announcement);
}

TEST_CASE("HREDUCE_NODE_SINGLE_COPY: on by default, auto races, anything else is an error",
          "[negative]") {
  CHECK(single_copy_setting(nullptr) == SingleCopySetting::on);
  CHECK(single_copy_setting("") == SingleCopySetting::on);
  CHECK(single_copy_setting("auto") == SingleCopySetting::race);
  for (const char* on : {"on", "1", "yes", "true"}) {
    CHECK(single_copy_setting(on) == SingleCopySetting::on);
  }
  for (const char* off : {"off", "0", "no", "false"}) {
    CHECK(single_copy_setting(off) == SingleCopySetting::off);
  }
  CHECK_THROWS_WITH(single_copy_setting("sometimes"),
                    Catch::Contains("HREDUCE_NODE_SINGLE_COPY") && Catch::Contains("'sometimes'"));
}

TEST_CASE("the race keeps the way with the smaller summed time, a tie the single copy") {
  CHECK(single_copy_won({10e-6, 12e-6}));
  CHECK(single_copy_won({12e-6, 12e-6}));
  CHECK_FALSE(single_copy_won({12.5e-6, 12e-6}));
}

TEST_CASE("the single copy's cut: halves, or the receiver's share from 48 KiB") {
  // Two folders (allreduce) or none (an exscan's copy): halves, on a line
  // (8 doubles): 500 elements cut after 504.
  CHECK(single_copy_cut(1000, 8, 2, 0, false) == 504);
  CHECK(single_copy_cut(1000, 8, 0, 0, false) == 504);
  // One receiver below 48 KiB (8000 B): it does everything.
  CHECK(single_copy_cut(1000, 8, 1, 0, false) == 1000);
  CHECK(single_copy_cut(1000, 8, 1, 1, false) == 0);
  // 128 KiB: the receiver 3/5 plus 4 KiB (512 doubles): 9828 + 2 + 512 =
  // 10342, on a line 10344.
  CHECK(single_copy_cut(16384, 8, 1, 0, false) == 10344);
  // A scan's receiver is process 1, and process 0 also copies its input to
  // its prefix: the receiver 4/5, 13104 + 3 + 512 = 13619; process 0 the
  // other 2765, on a line 2768.
  CHECK(single_copy_cut(16384, 8, 1, 1, true) == 2768);
  // An element that does not divide a line: no rounding.
  CHECK(single_copy_cut(1001, 24, 2, 0, false) == 501);
}

TEST_CASE("an op that may throw takes the chunks, which carry the verdict") {
  const NodeShape two{2, 256 << 10, true};
  for (std::size_t bytes : {std::size_t{8}, std::size_t{16384}, std::size_t{1} << 20}) {
    CHECK(node_way(CollectiveKind::allreduce, bytes, 8, true, two) == NodeWay::chunks);
  }
  CHECK(to_string(NodeWay::inline_announcement) == "inline");
  CHECK(to_string(NodeWay::single_copy) == "single copy");
  CHECK(to_string(NodeWay::chunks) == "chunks");
}

}  // namespace hreduce::detail
