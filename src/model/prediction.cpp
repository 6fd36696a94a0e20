#include "src/model/prediction.hpp"

#include <algorithm>
#include <charconv>

#include "hreduce/error.hpp"
#include "src/model/message_steps.hpp"
#include "src/model/node_call.hpp"

namespace hreduce::detail::model {

Layout parse_layout(const std::string& text) {
  int parts[3] = {0, 0, 0};
  const char* at = text.data();
  const char* end = text.data() + text.size();
  for (int i = 0; i < 3; ++i) {
    const auto [next, ec] = std::from_chars(at, end, parts[i]);
    const bool separator_ok = i == 2 ? next == end : next != end && *next == 'x';
    if (ec != std::errc() || parts[i] < 1 || !separator_ok) {
      throw ArgumentError("predict: --layout '" + text +
                          "' is not NODESxPROCSxTHREADS with each at least 1 (e.g. 1024x8x16)");
    }
    at = next + 1;
  }
  return {parts[0], parts[1], parts[2]};
}

std::string to_string(const Layout& layout) {
  return std::to_string(layout.nodes) + "x" + std::to_string(layout.processes) + "x" +
         std::to_string(layout.threads);
}

std::size_t element_bytes(const std::string& type) {
  if (type == "double") return 8;
  if (type == "int32") return 4;
  if (type == "double_int") return 16;
  throw ArgumentError("predict: type '" + type + "' is not one of double, int32, double_int");
}

std::string op_class_of(const std::string& type) { return type == "double_int" ? "minloc" : "sum"; }

Prediction predict_hreduce(const MachinePrices& prices, const Topology& node, const Layout& layout,
                           const CallCase& call, const ModelSettings& settings) {
  element_bytes(call.type);  // names a type it does not know
  return NodeCall(prices, node, layout, call, settings).run();
}

// Every member an MPI rank, R = processes × threads of them per node, all
// folding at once: a fold past the caches shares the node's bandwidth.
std::vector<FlatPrediction> predict_flat_mpi(const MachinePrices& prices, const Layout& layout,
                                             const CallCase& call) {
  const long long Q = layout.members();
  const long long R = 1LL * layout.processes * layout.threads;
  const auto m = static_cast<double>(call.bytes_per_member);
  double node_fold = 0;
  for (int i = 0; i < prices.numa_nodes(); ++i) node_fold += prices.node_rate(Stream::fold, i, i);
  const bool cached =
      2 * m * static_cast<double>(R) <= static_cast<double>(prices.last_level_cache_bytes());
  const double fold_rate = cached ? prices.fold_rate(op_class_of(call.type), call.type)
                                  : std::min(prices.one_thread_rate(Stream::fold, 0, 0),
                                             node_fold / static_cast<double>(R));
  std::vector<FlatPrediction> out;
  for (MessageAlgorithm a : kFlatAlgorithms) {
    FlatPrediction f;
    f.algorithm = to_string(a);
    if (Q == 1) {
      f.seconds = m / prices.cached_copy_rate();
      f.dominant = "copy input to output";
    } else {
      const MessagePrice p =
          price_steps(message_steps(a, call.collective, Q, m), R, prices, fold_rate);
      if (p.applicable) f.seconds = p.total(), f.dominant = p.dominant;
    }
    out.push_back(f);
  }
  return out;
}

}  // namespace hreduce::detail::model
