// Building one node's call (node_call.hpp): the members, their
// synchronisations and streams, and the phases inside each process.
#include "src/model/node_call.hpp"

#include <algorithm>
#include <map>

#include "hreduce/error.hpp"
#include "src/model/local_decision_adapter.hpp"

namespace hreduce::detail::model {

namespace {

// Bytes a call reads and writes, over all `members` of a node, m each: every
// input but an exscan's last, and the outputs written (a reduce's one, a
// reduce_scatter's blocks that add up to one vector, an exscan's first left
// alone).
double footprint_bytes(CollectiveKind kind, int members, double m) {
  const bool exclusive = kind == CollectiveKind::exscan;
  const double inputs = members - (exclusive ? 1 : 0);
  double outputs = members - (exclusive ? 1 : 0);
  if (kind == CollectiveKind::reduce || kind == CollectiveKind::reduce_scatter_block) outputs = 1;
  return std::max(m, (inputs + outputs) * m);
}

}  // namespace

NodeCall::NodeCall(const MachinePrices& prices, const Topology& node, const Layout& layout,
                   const CallCase& call, const ModelSettings& settings)
    : prices_(prices), node_(node), layout_(layout), call_(call), settings_(settings) {
  const std::optional<Collective> collective = parse_collective(call.collective);
  if (!collective || *collective == Collective::reduce_scatter) {
    throw ArgumentError("predict: collective '" + call.collective +
                        "' is not one of reduce, allreduce, reduce_scatter_block, scan, exscan");
  }
  kind_ = kind_of(*collective);
  m_ = static_cast<double>(call.bytes_per_member);
  const int members = layout.processes * layout.threads;
  pus_ = place(node, members, settings.placement).pu_of_member;
  last_.assign(static_cast<std::size_t>(members), -1);
  oversubscribed_ = members > node.count(hreduce::Level::core) && members > node.pu_count();
  // Buffers are reused call after call (as in the bench): the inputs the
  // call reads and the outputs it writes, of every member of the node, stay
  // in the caches when they fit. With the probe's by-size curve, that
  // footprint says which cache level serves the streams, as one thread's
  // working set did for the probe: the last-level cache is shared, and a
  // sliced member reads every input. Without the curve, whether the
  // footprint fits the last-level caches.
  working_set_ = footprint_bytes(kind_, members, m_);
  cached_ = prices.cached_rate(Stream::copy, working_set_) > 0 ||
            working_set_ <= static_cast<double>(prices.last_level_cache_bytes());
  for (int numa = 0; numa < prices.numa_nodes(); ++numa) {
    memory_.push_back(
        sim_.add_resource("memory bandwidth of NUMA node " + std::to_string(numa), 1.0));
  }
}

std::vector<int> NodeCall::after_of(int member) const {
  const int last = last_[static_cast<std::size_t>(member)];
  return last < 0 ? std::vector<int>{} : std::vector<int>{last};
}

// The members meet on one line (a counter, or the flags a waiter scans): a
// line serves one access at a time, so k members take k transfers. Across
// processes on an oversubscribed node a waiter sleeps, and the last
// arrival pays a futex wake-up.
double NodeCall::cached_stream_rate(Stream kind) const {
  if (!cached_) return 0;
  const double op_rate = prices_.fold_rate(op_class_of(call_.type), call_.type);
  // Past the curve's largest size, still in the last-level cache, the
  // curve's last rate: 16 threads' 16 MiB reduce on a 16-core machine (272
  // MiB of a 300 MiB L3) took 2.2 ms, 2.05 ms priced so, 0.35 ms at the
  // cache-resident fold's speed.
  const double level_rate = prices_.cached_rate_within_curve(kind, working_set_);
  if (level_rate <= 0) return kind == Stream::fold ? op_rate : prices_.cached_copy_rate();
  // The op's own speed (MINLOC is slower than a sum) caps a fold.
  return kind == Stream::fold ? std::min(level_rate, op_rate) : level_rate;
}

// The longest one-way trip from the first member's PU to another's.
double NodeCall::slowest_one_way(const std::vector<int>& members) const {
  const int owner = member_pu(members.front());
  double slowest = 0;
  for (int m : members) slowest = std::max(slowest, prices_.one_way_seconds(owner, member_pu(m)));
  return slowest;
}

void NodeCall::synchronise(const std::vector<int>& members, Level level, const std::string& what,
                           Waiters waiters) {
  if (members.size() < 2) return;
  const int line =
      sim_.add_resource("a line " + std::to_string(members.size()) + " members poll (" + what + ")",
                        1 / slowest_one_way(members));
  Task join;
  for (std::size_t i = waiters == Waiters::last ? 1 : 0; i < members.size(); ++i) {
    const int m = members[i];
    Task access;
    access.after = after_of(m);
    access.work = 1;
    access.resources = {line};
    access.level = level;
    access.term = "cache-line transfers (" + what + ")";
    join.after.push_back(sim_.add_task(std::move(access)));
  }
  join.level = level;
  const bool sleeps = oversubscribed_ && level == Level::waiting;
  join.latency = sleeps ? prices_.futex_wake_seconds() : 0;
  join.term = sleeps ? "futex wake-up" : "cache-line transfers (" + what + ")";
  const int joined = sim_.add_task(std::move(join));
  for (int m : members) then(m, joined);
}

// A waiter's reads of the others' lines overlap, but fewer than the
// core's line fill buffers allow (16 on recent Intel cores): the engine
// polls one member's line at a time, a branch per line. On the 16-thread
// run of a 16-core machine 4 fitted best (the threads' median |error| 28.7
// %, 35.3 % with 8, 48.7 % with 16, 34.6 % with the barrier priced as one
// line that every member takes in turn).
constexpr int kLinesInFlight = 4;

void NodeCall::meet_on_own_lines(const std::vector<int>& members, const std::string& what,
                                 Waiters waiters) {
  const auto k = static_cast<int>(members.size());
  if (k <= 2 || oversubscribed_) {  // as one line: the same transfers for two
    synchronise(members, Level::waiting, what, waiters);
    return;
  }
  // The latest arrival's line reaches the waiters, which read the rest in
  // batches (all waiters: one more transfer, as for two members).
  const int transfers =
      (waiters == Waiters::all ? 1 : 0) + (k - 1 + kLinesInFlight - 1) / kLinesInFlight;
  Task join;
  for (int m : members) {
    const std::vector<int> after = after_of(m);
    join.after.insert(join.after.end(), after.begin(), after.end());
  }
  join.latency = transfers * slowest_one_way(members);
  join.level = Level::waiting;
  join.term = "cache-line transfers (" + what + ")";
  const int joined = sim_.add_task(std::move(join));
  for (int m : members) then(m, joined);
}

void NodeCall::stream(int member, double bytes, Stream kind, int data_numa, Level level,
                      const std::string& term) {
  if (bytes <= 0) return;
  Task t;
  t.after = after_of(member);
  t.level = level;
  t.term = term;
  if (cached_) {
    t.work = bytes;
    t.own_rate = cached_stream_rate(kind);
  } else {
    // Work in seconds of the whole NUMA node's bandwidth: one stream runs
    // at its one-thread rate, k streams share the node.
    const int mine = prices_.numa_of_pu(member_pu(member));
    const double node_rate = prices_.node_rate(kind, data_numa, data_numa);
    t.work = bytes / node_rate;
    t.own_rate = prices_.one_thread_rate(kind, mine, data_numa) / node_rate;
    t.resources = {memory_[static_cast<std::size_t>(data_numa)]};
  }
  then(member, sim_.add_task(std::move(t)));
}

// A member that reads from several NUMA nodes at once (chunk by chunk over
// inputs placed on each): one flow per node, sized so that alone they end
// together at the member's own pace; a busy node slows only its own flow.
void NodeCall::stream_spread(int member, const std::map<int, double>& bytes_on_numa, Stream kind,
                             Level level, const std::string& term) {
  double total = 0, alone_seconds = 0;
  const int mine = prices_.numa_of_pu(member_pu(member));
  for (const auto& [numa, bytes] : bytes_on_numa) {
    total += bytes;
    alone_seconds += bytes / prices_.one_thread_rate(kind, mine, numa);
  }
  if (total <= 0) return;
  if (cached_ || bytes_on_numa.size() == 1) {
    stream(member, total, kind, bytes_on_numa.begin()->first, level, term);
    return;
  }
  Task join;
  join.level = level;
  join.term = term;
  for (const auto& [numa, bytes] : bytes_on_numa) {
    const double node_rate = prices_.node_rate(kind, numa, numa);
    Task t;
    t.after = after_of(member);
    t.level = level;
    t.term = term;
    t.work = bytes / node_rate;
    t.own_rate = bytes / alone_seconds / node_rate;
    t.resources = {memory_[static_cast<std::size_t>(numa)]};
    join.after.push_back(sim_.add_task(std::move(t)));
  }
  then(member, sim_.add_task(std::move(join)));
}

// The probe's trip moves the lines both ways: the writer takes them back,
// the reader fetches them. Where the writers wait for nothing of this call
// (Waiters::last), their half runs while the reader waits on other things.
void NodeCall::take_lines(int member, double count, double bytes, Level level) {
  const double share = waiters_of(kind_) == Waiters::last ? 0.5 : 1.0;
  wait_for_lines(member, share * count * prices_.data_from_another_core_seconds(bytes), level,
                 "lines from the other cores");
}

void NodeCall::pull_lines(int member, double bytes, const char* what) {
  if (bytes <= 0) return;
  wait_for_lines(member, prices_.data_from_another_core_seconds(bytes), Level::node_segment,
                 std::string("lines from the other cores (") + what + ")");
}

void NodeCall::wait_for_lines(int member, double seconds, Level level, std::string term) {
  if (seconds <= 0) return;
  Task t;
  t.after = after_of(member);
  t.latency = seconds;
  t.level = level;
  t.term = std::move(term);
  then(member, sim_.add_task(std::move(t)));
}

namespace {
std::vector<int> members_of(int process, int threads) {
  std::vector<int> members;
  for (int t = 0; t < threads; ++t) members.push_back(process * threads + t);
  return members;
}
bool writes_every_output(CollectiveKind kind) {
  return kind == CollectiveKind::allreduce || kind == CollectiveKind::scan ||
         kind == CollectiveKind::exscan;
}
}  // namespace

// Member j folds slice j (plan_slices) of every input of its process in
// rank order, reading each from the NUMA node where its owner put it, then
// writes it into one output, or into every member's.
void NodeCall::sliced_pass(int process, bool every_output) {
  const int T = layout_.threads;
  const std::vector<double> shares =
      slice_shares(T, call_.bytes_per_member, element_bytes(call_.type), settings_.options);
  std::map<int, int> inputs_on_numa;
  for (int q : members_of(process, T)) ++inputs_on_numa[prices_.numa_of_pu(member_pu(q))];
  // Member j's slice of T inputs takes T-1 folds (each reads two slices and
  // writes one: a fold's vector bytes), the last writing the first output;
  // every further output is a copy. An exscan's last input folds into no
  // one's output and member 0's output is left alone: T-2 folds and T-1
  // outputs (with two members, one copy).
  const bool exclusive = kind_ == CollectiveKind::exscan && layout_.processes * layout_.nodes == 1;
  const double folds = T - (exclusive ? 2 : 1);
  const double outputs = every_output ? T - (exclusive ? 1 : 0) : 1;
  for (int j : members_of(process, T)) {
    const double slice = m_ * shares[static_cast<std::size_t>(j - process * T)];
    const int mine = prices_.numa_of_pu(member_pu(j));
    if (folds > 0) {
      std::map<int, double> reads;  // the folds spread over where the inputs lie
      for (const auto& [numa, count] : inputs_on_numa) reads[numa] = slice * folds * count / T;
      stream_spread(j, reads, Stream::fold, Level::inside_process, "fold (sliced)");
    } else {
      stream(j, slice, Stream::copy, mine, Level::inside_process, "copy (sliced)");
    }
    stream(j, slice * (outputs - 1), Stream::copy, mine, Level::inside_process,
           "write results (sliced)");
  }
}

// The engine's own tree (plan_tree), round by round: the parent sees the
// child's flag (half a round trip of their relation) and folds its vector.
void NodeCall::tree_up(int process) {
  const int T = layout_.threads;
  std::vector<int> pus;
  for (int q : members_of(process, T)) pus.push_back(member_pu(q));
  const TreePlan tree = local_tree(node_, pus, settings_.options);
  for (const std::vector<Transfer>& round : tree.rounds) {
    for (const Transfer& hop : round) {
      const int from = process * T + hop.sender, to = process * T + hop.receiver;
      Task t;
      t.after = after_of(to);
      for (int a : after_of(from)) t.after.push_back(a);
      t.latency = prices_.one_way_seconds(member_pu(from), member_pu(to));
      t.work = m_;
      // The hop's fold streams like any other: at the cache level of the
      // call's working set, or from memory at one thread's rate.
      const int numa = prices_.numa_of_pu(member_pu(to));
      t.own_rate = cached_ ? cached_stream_rate(Stream::fold)
                           : prices_.one_thread_rate(Stream::fold, numa, numa);
      t.level = Level::inside_process;
      t.term = "tree hops (line transfer and fold)";
      then(to, sim_.add_task(std::move(t)));
    }
  }
}

// A team inside one process: the engine's whole collective (mailbox, tree
// or sliced), every member ending with its own result.
void NodeCall::whole_call_in_one_process() {
  const int T = layout_.threads;
  const std::vector<int> all = members_of(0, T);
  const LocalDecision d =
      local_path(kind_, call_.bytes_per_member, element_bytes(call_.type), T, T, settings_.options);
  decisions_ = "inside the process: " + std::string(to_string(d.path)) + " over " +
               std::to_string(T) + " members";
  const int numa0 = prices_.numa_of_pu(member_pu(0));
  if (T == 1) {
    stream(0, m_, Stream::copy, numa0, Level::inside_process, "copy input to output");
    return;
  }
  if (d.path == LocalPath::mailbox) {
    for (int j : all) stream(j, m_, Stream::copy, numa0, Level::inside_process, "announce");
    // Each member's announcement is a line of its own, as the node level's.
    meet_on_own_lines(all, "announcements", waiters_of(kind_));
    for (int j : all) {
      if (kind_ == CollectiveKind::reduce && j != 0) continue;
      const bool scan = kind_ == CollectiveKind::scan || kind_ == CollectiveKind::exscan;
      take_lines(j, scan ? j : T - 1, m_, Level::inside_process);
      stream(j, m_ * T, Stream::fold, numa0, Level::inside_process, "fold the payloads");
    }
    return;
  }
  if (d.path == LocalPath::tree) {
    tree_up(0);
    if (kind_ != CollectiveKind::allreduce) return;
    synchronise(all, Level::waiting, "result published");
    for (int j = 1; j < T; ++j)
      stream(j, m_, Stream::copy, numa0, Level::inside_process, "copy result");
    return;
  }
  meet_on_own_lines(all, "arrival");
  sliced_pass(0, writes_every_output(kind_));
  meet_on_own_lines(all, "slices done",
                    kind_ == CollectiveKind::reduce ? Waiters::last : Waiters::all);
}

// Step 1 of a team over processes: the process's members reduce (or scan)
// to its leader with the engine's own path; a lone member hands its
// buffers to the node level.
void NodeCall::local_up(int process) {
  const int T = layout_.threads;
  if (T == 1) {
    // By messages alone, the engine's one-member step still copies the
    // input into the leader's buffer (the output, or the workspace) that
    // the messages then fold in place; the node level takes it as it is.
    if (!by_node_level()) {
      stream(leader(process), m_, Stream::copy, prices_.numa_of_pu(member_pu(leader(process))),
             Level::inside_process, "copy the input to the leader's buffer");
    }
    return;
  }
  const bool scan = kind_ == CollectiveKind::scan || kind_ == CollectiveKind::exscan;
  const CollectiveKind step = scan ? kind_ : CollectiveKind::reduce;
  const int team = static_cast<int>(std::min<long long>(layout_.members(), 1 << 30));
  const LocalDecision d = local_path(step, call_.bytes_per_member, element_bytes(call_.type), T,
                                     team, settings_.options);
  if (process == 0) decisions_ += "inside each process: " + std::string(to_string(d.path));
  const std::vector<int> all = members_of(process, T);
  if (d.path == LocalPath::tree) {
    tree_up(process);
    return;
  }
  meet_on_own_lines(all, "arrival");
  sliced_pass(process, scan);
  meet_on_own_lines(all, "slices done");
}

// Step 3: every member takes its part of the leader's result.
void NodeCall::local_down(int process) {
  const int T = layout_.threads;
  if (kind_ == CollectiveKind::reduce || kind_ == CollectiveKind::allreduce) {
    if (T == 1) return;  // the result is in the lone member's output already
  } else if (T == 1) {
    // A lone member by messages: its block, or its prefix combined with its input.
    if (by_node_level()) return;
    const int l = leader(process);
    const double part = kind_ == CollectiveKind::reduce_scatter_block
                            ? m_ / static_cast<double>(layout_.members())
                            : m_;
    stream(l, part, kind_ == CollectiveKind::scan ? Stream::fold : Stream::copy,
           prices_.numa_of_pu(member_pu(l)), Level::inside_process, "the lone member's result");
    return;
  }
  if (T == 1 || kind_ == CollectiveKind::reduce) return;
  const std::vector<int> all = members_of(process, T);
  synchronise(all, Level::waiting, "leader's result published");
  const int from = prices_.numa_of_pu(member_pu(leader(process)));
  const double part = kind_ == CollectiveKind::reduce_scatter_block
                          ? m_ / static_cast<double>(layout_.members())
                          : m_;
  const bool combine = kind_ == CollectiveKind::scan || kind_ == CollectiveKind::exscan;
  for (int j : all) {
    stream(j, part, combine ? Stream::fold : Stream::copy, from, Level::inside_process,
           combine ? "combine with the prefix" : "copy the result");
  }
}

Prediction NodeCall::run() {
  if (layout_.nodes == 1 && layout_.processes == 1) {
    whole_call_in_one_process();
  } else {
    for (int p = 0; p < layout_.processes; ++p) local_up(p);
    node_level_up();
    between_nodes();
    node_level_down();
    for (int p = 0; p < layout_.processes; ++p) local_down(p);
  }
  const std::vector<TaskTiming> timings = sim_.run();
  const CriticalPath path = critical_path(sim_, timings);
  Prediction out;
  out.seconds = path.seconds;
  for (int l = 0; l < kLevelCount; ++l) out.levels[l] = path.level_seconds[l];
  out.dominant = path.dominant_term;
  out.decisions = decisions_;
  out.measured_from = measured_from_;
  return out;
}

}  // namespace hreduce::detail::model
