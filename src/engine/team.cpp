// Team and Member: construction, attach mode, run(), and the option names.
#include "hreduce/team.hpp"

#include <algorithm>
#include <memory>
#include <optional>

#include "src/common/names.hpp"
#include "src/engine/collectives.hpp"
#include "src/engine/member_access.hpp"
#include "src/engine/process_group.hpp"
#include "src/engine/team_state.hpp"
#include "src/engine/workers.hpp"

namespace hreduce {

int Member::rank() const { return state_->global_rank; }
int Member::size() const { return state_->team.total_members; }
int Member::pu() const { return state_->pu; }
bool Member::pin() const { return bind_current_thread(state_->team.topology, state_->pu); }
const CollectiveOptions& Member::default_options() const {
  return state_->team.options.collectives;
}

void detail::execute_erased(Member& member, CallArgs call) {
  if (call.options == nullptr) call.options = &MemberAccess::default_options(member);
  execute(MemberAccess::state(member), call);
}

detail::MemberState& detail::state_of(Member& member) { return MemberAccess::state(member); }

void Member::barrier() {
  detail::Call call;
  call.kind = detail::CollectiveKind::barrier;
  detail::execute(*state_, call);
}

Team::Team(TeamOptions options) : Team(std::move(options), nullptr) {}

Team::Team(TeamOptions options, std::unique_ptr<detail::ProcessGroup> group)
    : state_(std::make_unique<detail::TeamState>(std::move(options), std::move(group))),
      workers_(std::make_unique<detail::Workers>()) {
  members_.reserve(state_->members.size());
  for (auto& m : state_->members) members_.push_back(Member(m.get()));
}

Team::~Team() { workers_.reset(); }

// The members' states live on the heap (TeamState), and so do the Member
// handles (the vector's buffer moves along): workers started on them stay
// valid.
Team::Team(Team&& other) noexcept = default;

Team& Team::operator=(Team&& other) noexcept {
  if (this != &other) {
    workers_.reset();  // before the state its threads use goes
    members_ = std::move(other.members_);
    state_ = std::move(other.state_);
    workers_ = std::move(other.workers_);
  }
  return *this;
}

int Team::size() const { return state_->total_members; }
int Team::local_size() const { return state_->size(); }
int Team::processes() const { return state_->group ? state_->group->processes() : 1; }
bool Team::usable() const {
  return !state_->broken.load(std::memory_order_acquire) &&
         (state_->group == nullptr || state_->group->usable());
}

void Team::resynchronize() {
  if (state_->group != nullptr) state_->group->resynchronize();
  state_->restart();
}

namespace {

// Checked: a value outside the enum would read as some internal step.
detail::CollectiveKind kind_of(Collective collective) {
  if (!detail::enum_known(detail::kCollectiveNames, collective)) {
    throw ArgumentError("Team::explain: collective " +
                        std::to_string(static_cast<int>(collective)) + " is not a Collective");
  }
  return detail::kind_of(collective);
}

// What execute_local() decides the path from, for a call of a predefined
// op with `options` (bytes_per_member: each member's input).
detail::LocalFacts local_facts(const detail::TeamState& team, detail::CollectiveKind kind,
                               std::size_t bytes_per_member, const CollectiveOptions& options) {
  detail::LocalFacts facts;
  facts.kind = kind;
  facts.bytes_per_member = bytes_per_member;
  facts.elem_size = 1;
  facts.op_may_throw = false;
  facts.members_here = team.size();
  facts.members_in_team = team.total_members;
  facts.spans_processes = team.group != nullptr;
  facts.options = options;
  return facts;
}

// "inside each process: <path> over <n> members, because <reason>", and for
// the tree its shape and rounds (an allreduce's, to member 0).
std::string local_text(const detail::TeamState& team, detail::LocalFacts facts) {
  const detail::LocalDecision decision = detail::decide_local(facts);
  std::string path(detail::to_string(decision.path));
  if (decision.path == detail::LocalPath::tree) {
    detail::TreeFacts tree;
    tree.members = team.size();
    tree.options = facts.options;
    tree.levels = team.levels;
    tree.containers = detail::tree_containers(team.topology, team.placement, team.levels);
    path += " (" + detail::plan_tree(tree).reason + ")";
  }
  facts.op_may_throw = true;
  if (detail::local_choice(facts).path != decision.path) path += " (a user op goes sliced)";
  return "inside each process: " + path + " over " + std::to_string(team.size()) +
         " members, because " + decision.reason;
}

// What a level promises, in a line.
std::string level_text(const CollectiveOptions& options, int members) {
  std::string text = "reproducibility " + std::string(to_string(options.reproducibility)) + ": ";
  switch (options.reproducibility) {
    case Reproducibility::run_to_run:
      return text + "the same bits for the same layout, options and inputs";
    case Reproducibility::shape_independent:
      return text + "the left fold in rank order over " + std::to_string(members) +
             " members, whatever their layout";
    case Reproducibility::exact:
      return text + "for op::sum on floating types, the correctly rounded sum" +
             (members <= 2 ? " (one IEEE addition: two members)"
                           : " (an allreduce agrees on a grid, then sums over integers)") +
             "; other ops are refused";
  }
  return text;
}

}  // namespace

std::string_view Team::local_path(Collective collective, std::size_t bytes_per_member) const {
  const detail::LocalFacts facts =
      local_facts(*state_, kind_of(collective), bytes_per_member, state_->options.collectives);
  return detail::to_string(detail::decide_local(facts).path);
}

std::string Team::explain(Collective collective, std::size_t bytes_per_member) const {
  return explain(collective, bytes_per_member, state_->options.collectives);
}

std::string Team::explain(Collective collective, std::size_t bytes_per_member,
                          const CollectiveOptions& options) const {
  const detail::CollectiveKind kind = kind_of(collective);
  if (!detail::options_valid(options)) {
    throw ArgumentError("Team::explain: " + detail::options_problem(options));
  }
  const std::string local =
      local_text(*state_, local_facts(*state_, kind, bytes_per_member, options));
  const std::string level = "; " + level_text(options, size());
  if (!state_->group) return std::string(to_string(collective)) + ": " + local + level;
  if (options.reproducibility == Reproducibility::shape_independent &&
      state_->group->left_fold_by_chain()) {
    // hybrid_execute.cpp's left_fold: no inter-process algorithm to pick.
    return std::string(to_string(collective)) + ": " + std::to_string(processes()) +
           " processes fold in turn, in rank order, each handing the next its fold by message; " +
           local + level;
  }
  return state_->group->explain(kind, bytes_per_member, true) + "; " + local + level;
}

std::string Team::across_processes(Collective collective, std::size_t bytes_per_member) const {
  if (!state_->group) return {};
  return state_->group->route(kind_of(collective), bytes_per_member);
}

const Topology& Team::topology() const { return state_->topology; }
const Placement& Team::placement() const { return state_->placement; }
const std::vector<Level>& Team::levels() const { return state_->levels; }
const TeamOptions& Team::options() const { return state_->options; }

Member& Team::member(int index) {
  if (index < 0 || index >= local_size()) {
    throw ArgumentError("Team::member: index " + std::to_string(index) + " is outside 0.." +
                        std::to_string(local_size() - 1) + " (members of this process)");
  }
  return members_[index];
}

namespace detail {

Team team_over_processes(TeamOptions options, std::unique_ptr<ProcessGroup> group) {
  return Team(std::move(options), std::move(group));
}

}  // namespace detail

void* Team::allocate_bytes(std::size_t bytes) {
  if (state_->group) {
    if (void* shared = state_->group->allocate_shared(bytes)) return shared;
  }
  // Laid out as one vector of the sliced path: each NUMA node's run of
  // slices on that node (numa_placement.hpp). Page aligned and zeroed.
  const std::size_t size = std::max<std::size_t>(bytes, 1);
  state_->private_allocations.emplace_back(state_->topology, size,
                                           detail::page_spans(state_->numa_plan, size, 4096));
  return state_->private_allocations.back().data();
}

void Team::run_erased(void (*invoke)(void*, Member&), void* context) {
  workers_->run(members_, state_->topology, state_->options.bind, invoke, context);
}

std::string_view to_string(Algorithm algorithm) {
  return detail::enum_name(detail::kAlgorithmNames, algorithm);
}

std::string_view to_string(TreeShape shape) {
  return detail::enum_name(detail::kTreeShapeNames, shape);
}

std::string_view to_string(Collective collective) {
  return detail::enum_name(detail::kCollectiveNames, collective);
}

std::optional<Collective> parse_collective(std::string_view name) {
  return detail::enum_value(detail::kCollectiveNames, name);
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  return detail::enum_value(detail::kAlgorithmNames, name);
}

std::optional<TreeShape> parse_tree_shape(std::string_view name) {
  return detail::enum_value(detail::kTreeShapeNames, name);
}

std::string_view to_string(Reproducibility level) {
  return detail::enum_name(detail::kReproducibilityNames, level);
}

std::optional<Reproducibility> parse_reproducibility(std::string_view name) {
  return detail::enum_value(detail::kReproducibilityNames, name);
}

}  // namespace hreduce
