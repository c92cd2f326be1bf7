// The witness's status (runner/core/witness_status.h): written and read by name,
// compared as the enum; a name of no known status is an error that names it.
#include "runner/core/witness_status.h"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

#include "runner/core/witness_record.h"

namespace maxcode {
namespace {

TEST(WitnessStatus, EveryStatusReadsBackFromItsName) {
  for (WitnessStatus s : kWitnessStatuses) EXPECT_EQ(witness_status_from_name(witness_status_name(s)), s);
  std::string names;
  for (WitnessStatus s : kWitnessStatuses) names += witness_status_name(s) + "|";
  EXPECT_EQ(names, "agrees|rejected|not witnessed|");  // result.json's (docs/result-format.md)
  std::ostringstream out;
  out << WitnessStatus::kNotWitnessed;
  EXPECT_EQ(out.str(), "not witnessed");
}

TEST(WitnessStatus, AnUnknownNameIsNamed) {
  try {
    witness_status_from_name("agreed");
    FAIL() << "an unknown witness status was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown witness status 'agreed'");
  }
  EXPECT_THROW(witness_status_from_name("not-witnessed"), std::invalid_argument);  // names are exact
  EXPECT_THROW(witness_status_from_name(""), std::invalid_argument);
  // result.json's reader too.
  WitnessRecord r;
  r.status = WitnessStatus::kRejected;
  nlohmann::json j = to_json(r);
  EXPECT_EQ(j["status"], "rejected");
  EXPECT_EQ(witness_record_from_json(j).status, WitnessStatus::kRejected);
  j["status"] = "agreed";
  EXPECT_THROW(witness_record_from_json(j), std::invalid_argument);
}

}  // namespace
}  // namespace maxcode
