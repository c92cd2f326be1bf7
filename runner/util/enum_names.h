// Enums stored and shown by name (job.json, the service's rows, result.json): one table
// of (value, name) pairs per enum, and the two lookups each such enum needs.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace maxcode {

template <class Enum, std::size_t N>
using EnumNames = std::array<std::pair<Enum, std::string_view>, N>;

// The name of `value`; "unknown" for a value the table lacks (an integer cast to it).
template <class Enum, std::size_t N>
std::string enum_name(const EnumNames<Enum, N>& names, Enum value) {
  for (const auto& [v, name] : names)
    if (v == value) return std::string(name);
  return "unknown";
}

// Every name, in the table's order: the choices an error lists.
template <class Enum, std::size_t N>
std::vector<std::string_view> enum_names_of(const EnumNames<Enum, N>& names) {
  std::vector<std::string_view> out;
  for (const auto& [v, name] : names) out.push_back(name);
  return out;
}

// The value named `name`, or nothing: for a name that came over the network.
template <class Enum, std::size_t N>
std::optional<Enum> enum_named(const EnumNames<Enum, N>& names, std::string_view name) {
  for (const auto& [v, known] : names)
    if (known == name) return v;
  return std::nullopt;
}

// The value named `name`. Throws std::invalid_argument "unknown <what> '<name>'", the
// name cut to 40 characters: it may come from a document someone else wrote.
template <class Enum, std::size_t N>
Enum enum_from_name(const EnumNames<Enum, N>& names, std::string_view name, std::string_view what) {
  if (const std::optional<Enum> v = enum_named(names, name)) return *v;
  throw std::invalid_argument("unknown " + std::string(what) + " '" + std::string(name.substr(0, 40)) + "'");
}

}  // namespace maxcode
