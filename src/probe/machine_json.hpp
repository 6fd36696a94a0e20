// The machine description as JSON (docs/machine.md), both ways.
#pragma once

#include <string>
#include <string_view>

#include "src/probe/machine.hpp"

namespace hreduce::detail::probe {

std::string to_json(const MachineDescription& machine);
// Throws Error naming the field that is missing or of the wrong kind, or a
// schema other than kMachineSchema.
MachineDescription machine_from_json(std::string_view text);
// Throws Error naming the file when it cannot be written.
void write_text_file(const std::string& path, const std::string& text, const char* command);

}  // namespace hreduce::detail::probe
