// Enums that are both printed and parsed (options, placement, levels, the
// inter-process algorithms) keep their names in one table each, an array
// of {value, name} pairs that the printer, the parser and the messages that
// list the choices all read through the functions here.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace hreduce::detail {

template <class Enum>
struct EnumName {
  Enum value;
  const char* name;
};

// No value and no name twice: each table's static_assert.
template <class Enum, std::size_t N>
constexpr bool enum_names_distinct(const EnumName<Enum> (&table)[N]) {
  for (std::size_t i = 0; i < N; ++i) {
    for (std::size_t j = i + 1; j < N; ++j) {
      if (table[i].value == table[j].value) return false;
      if (std::string_view(table[i].name) == table[j].name) return false;
    }
  }
  return true;
}

// The name of `value`, or "?" for a value the table lacks.
template <class Enum, std::size_t N>
constexpr const char* enum_name(const EnumName<Enum> (&table)[N], Enum value) {
  for (const EnumName<Enum>& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return "?";
}

// Whether `value` is in the table (an enum may hold any integer).
template <class Enum, std::size_t N>
constexpr bool enum_known(const EnumName<Enum> (&table)[N], Enum value) {
  for (const EnumName<Enum>& entry : table) {
    if (entry.value == value) return true;
  }
  return false;
}

// The value called exactly `name`, if any.
template <class Enum, std::size_t N>
constexpr std::optional<Enum> enum_value(const EnumName<Enum> (&table)[N], std::string_view name) {
  for (const EnumName<Enum>& entry : table) {
    if (name == entry.name) return entry.value;
  }
  return std::nullopt;
}

// Every name, in table order, for a message: "a, b or c".
template <class Enum, std::size_t N>
std::string enum_names_text(const EnumName<Enum> (&table)[N]) {
  std::string text;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) text += i + 1 < N ? ", " : " or ";
    text += table[i].name;
  }
  return text;
}

}  // namespace hreduce::detail
