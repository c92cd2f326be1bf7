#include "runner/core/witness_status.h"

#include "runner/util/enum_names.h"

namespace maxcode {

namespace {

constexpr EnumNames<WitnessStatus, 3> kNames{{
    {WitnessStatus::kAgrees, "agrees"},
    {WitnessStatus::kRejected, "rejected"},
    {WitnessStatus::kNotWitnessed, "not witnessed"},
}};

}  // namespace

std::string witness_status_name(WitnessStatus status) { return enum_name(kNames, status); }

WitnessStatus witness_status_from_name(std::string_view name) { return enum_from_name(kNames, name, "witness status"); }

}  // namespace maxcode
