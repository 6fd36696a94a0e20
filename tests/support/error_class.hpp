// Tests assert the class of an error as well as its text: class_tag(e) is
// "[OpError] " and so on, to put in front of e.what().
#pragma once

#include <string>

#include "hreduce/error.hpp"

namespace hreduce::test {

inline std::string class_tag(const Error& e) {
  if (dynamic_cast<const TransportError*>(&e)) return "[TransportError] ";
  if (dynamic_cast<const UnusableTeamError*>(&e)) return "[UnusableTeamError] ";
  if (dynamic_cast<const OpError*>(&e)) return "[OpError] ";
  if (dynamic_cast<const ArgumentError*>(&e)) return "[ArgumentError] ";
  return "[Error] ";
}

}  // namespace hreduce::test
