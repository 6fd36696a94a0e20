// Turns the progress thread on for the whole test binary: set during static
// initialisation, before any test builds a team (the variable is read once).
#include <cstdlib>

namespace {
const bool progress_thread_on = [] { return ::setenv("HREDUCE_PROGRESS_THREAD", "1", 1) == 0; }();
}  // namespace
