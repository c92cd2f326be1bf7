#include "runner/core/witness_status.h"

#include <array>
#include <stdexcept>
#include <utility>

namespace maxcode {

namespace {

constexpr std::array<std::pair<WitnessStatus, std::string_view>, 3> kNames{{
    {WitnessStatus::kAgrees, "agrees"},
    {WitnessStatus::kRejected, "rejected"},
    {WitnessStatus::kNotWitnessed, "not witnessed"},
}};

}  // namespace

std::string witness_status_name(WitnessStatus status) {
  for (const auto& [s, name] : kNames)
    if (s == status) return std::string(name);
  return "unknown";
}

WitnessStatus witness_status_from_name(std::string_view name) {
  for (const auto& [s, known] : kNames)
    if (known == name) return s;
  throw std::invalid_argument("unknown witness status '" + std::string(name.substr(0, 40)) + "'");
}

}  // namespace maxcode
