#include "hreduce/schedule.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "hreduce/error.hpp"

namespace hreduce {

std::string to_string(const Transfer& t) {
  std::ostringstream out;
  out << '<' << t.sender << ',' << t.step << ',' << t.receiver << '>';
  return out.str();
}

Schedule::Schedule(int size, int root, std::vector<Transfer> transfers, std::string name)
    : size_(size), root_(root), transfers_(std::move(transfers)), name_(std::move(name)) {
  if (size_ < 1) {
    throw ArgumentError("Schedule: size must be >= 1, got " + std::to_string(size_));
  }
}

int Schedule::steps() const {
  int last = 0;
  for (const Transfer& t : transfers_) last = std::max(last, t.step);
  return last;
}

std::optional<Transfer> Schedule::outgoing(int member) const {
  for (const Transfer& t : transfers_) {
    if (t.sender == member) return t;
  }
  return std::nullopt;
}

std::vector<Transfer> Schedule::incoming(int member) const {
  std::vector<Transfer> in;
  for (const Transfer& t : transfers_) {
    if (t.receiver == member) in.push_back(t);
  }
  // Nearest first within a step: senders above ascending, then senders below
  // descending. Keying senders below by a negated rank after all senders
  // above gives that order with one comparison.
  auto key = [member](const Transfer& t) {
    const bool above = t.sender > member;
    return std::make_tuple(t.step, above ? 0 : 1, above ? t.sender : -t.sender);
  };
  std::sort(in.begin(), in.end(),
            [&](const Transfer& a, const Transfer& b) { return key(a) < key(b); });
  return in;
}

std::string Schedule::describe() const {
  std::map<int, std::vector<const Transfer*>> by_step;
  for (const Transfer& t : transfers_) by_step[t.step].push_back(&t);
  std::ostringstream out;
  out << (name_.empty() ? "schedule" : name_) << ": " << size_ << " members, root " << root_ << ", "
      << steps() << " steps\n";
  for (auto& [step, list] : by_step) {
    std::sort(list.begin(), list.end(),
              [](const Transfer* a, const Transfer* b) { return a->sender < b->sender; });
    out << "  step " << step << ':';
    for (const Transfer* t : list) out << ' ' << t->sender << "->" << t->receiver;
    out << '\n';
  }
  return out.str();
}

std::string Schedule::to_dot() const {
  std::ostringstream out;
  out << "digraph \"" << (name_.empty() ? "schedule" : name_) << "\" {\n"
      << "  rankdir=BT;\n";
  for (int m = 0; m < size_; ++m) {
    out << "  m" << m << " [label=\"" << m << "\"" << (m == root_ ? ", shape=doublecircle" : "")
        << "];\n";
  }
  for (const Transfer& t : transfers_) {
    out << "  m" << t.sender << " -> m" << t.receiver << " [label=\"" << t.step << "\"];\n";
  }
  out << "}\n";
  return out.str();
}

bool Schedule::is_valid(bool commutative) const {
  try {
    validate(commutative);
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace hreduce
