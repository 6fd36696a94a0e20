// Text the comparison's reports share: byte counts as people read them, and
// writing a report file with an error that names the option and the path.
#pragma once

#include <cstddef>
#include <string>

namespace hreduce::detail::compare {

// "8 B", "4 KiB", "64 MiB", "2 GiB"; sizes that are not whole units in bytes.
std::string human_bytes(std::size_t bytes);

// Throws Error ("hreduce bench: cannot write <option> file '<path>': ...").
void write_text_file(const std::string& path, const std::string& text, const char* option);

}  // namespace hreduce::detail::compare
