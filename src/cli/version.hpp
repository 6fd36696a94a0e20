// What `hreduce --version` prints: the release (the repository's VERSION
// file) and the commit it was built from, where the build knew it.
#pragma once

#include <string>

namespace hreduce::cli {

// "hreduce 0.1 (commit 3bf3c8d1a2b4)", "-dirty" after the commit when the
// tree had uncommitted changes, or "(commit unknown)" outside a git
// checkout.
std::string version_text();

}  // namespace hreduce::cli
