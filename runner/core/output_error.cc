#include "runner/core/output_error.h"

#include <cstdio>

namespace maxcode {

std::string describe(const OutputError& e) {
  char buffer[200];
  if (e.type == "text")
    std::snprintf(buffer, sizeof buffer, "max relative error %.2g over %zu printed values", e.max_relative, e.values);
  else
    std::snprintf(buffer, sizeof buffer, "max relative error %.2g (90th percentile %.2g), max %.0f %s over %zu values",
                  e.max_relative, e.p90_relative, e.max_ulp,
                  e.type == "float" || e.type == "double" ? "ulp" : "apart", e.values);
  return buffer;
}

nlohmann::json to_json(const OutputError& e) {
  nlohmann::json j = {{"output", e.output},          {"type", e.type},
                      {"values", e.values},          {"unwritten", e.unwritten},
                      {"mismatches", e.mismatches},  {"max_relative_error", e.max_relative},
                      {"p90_relative_error", e.p90_relative}, {"max_ulp_error", e.max_ulp},
                      {"loose", e.loose}};
  if (!e.first_mismatch.empty()) j["first_mismatch"] = e.first_mismatch;
  if (!e.note.empty()) j["note"] = e.note;
  return j;
}

OutputError output_error_from_json(const nlohmann::json& j) {
  OutputError e;
  e.output = j.value("output", "");
  e.type = j.value("type", "");
  e.values = j.value("values", std::size_t{0});
  e.unwritten = j.value("unwritten", std::size_t{0});
  e.mismatches = j.value("mismatches", std::size_t{0});
  e.max_relative = j.value("max_relative_error", 0.0);
  e.p90_relative = j.value("p90_relative_error", 0.0);
  e.max_ulp = j.value("max_ulp_error", 0.0);
  e.loose = j.value("loose", false);
  e.first_mismatch = j.value("first_mismatch", "");
  e.note = j.value("note", "");
  return e;
}

}  // namespace maxcode
