// Counts heap allocations of the whole test binary: linking
// //tests/support:count_allocations replaces the global operator new.
#pragma once

namespace hreduce::test {

// Every operator new (all forms) since the program started.
long heap_allocations();

}  // namespace hreduce::test
