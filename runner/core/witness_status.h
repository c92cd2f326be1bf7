// The out-of-process witness's verdict on a winner (runner/core/witness_record.h).
// result.json and the reports hold it by name; the code compares the enum.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

namespace maxcode {

// kAgrees: the winner stands; kRejected: it does not; kNotWitnessed: ncu could not judge.
enum class WitnessStatus { kAgrees, kRejected, kNotWitnessed };
// Every status, in the order above.
inline constexpr WitnessStatus kWitnessStatuses[] = {WitnessStatus::kAgrees, WitnessStatus::kRejected,
                                                     WitnessStatus::kNotWitnessed};

// "agrees", "rejected", "not witnessed".
std::string witness_status_name(WitnessStatus status);
// The status of that name; throws std::invalid_argument naming a name that is none.
WitnessStatus witness_status_from_name(std::string_view name);

// Printed by name in test failures and logs.
inline std::ostream& operator<<(std::ostream& out, WitnessStatus status) { return out << witness_status_name(status); }

}  // namespace maxcode
