#include "runner/core/benchmark_audit.h"

namespace maxcode {

nlohmann::json to_json(const BenchmarkAudit& a) {
  nlohmann::json j = {{"benchmark", a.benchmark},       {"printed_numbers", a.printed_numbers},
                      {"summary_only", a.summary_only}, {"calls", a.calls},
                      {"interface", a.interface},       {"call_check", a.call_check},
                      {"findings", a.findings}};
  auto optional = [&](const char* key, const std::optional<bool>& v) {
    j[key] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  optional("seed_changes_output", a.seed_changes_output);
  optional("input_changes_output", a.input_changes_output);
  optional("inputs_reused", a.inputs_reused);
  optional("outputs_unpoisoned", a.outputs_unpoisoned);
  return j;
}

BenchmarkAudit benchmark_audit_from_json(const nlohmann::json& j) {
  BenchmarkAudit a;
  a.benchmark = j.value("benchmark", "");
  a.printed_numbers = j.value("printed_numbers", std::size_t{0});
  a.summary_only = j.value("summary_only", false);
  a.calls = j.value("calls", 0L);
  a.interface = j.value("interface", "");
  a.call_check = j.value("call_check", "");
  a.findings = j.value("findings", std::vector<std::string>{});
  auto optional = [&](const char* key) -> std::optional<bool> {
    if (!j.contains(key) || j[key].is_null()) return std::nullopt;
    return j[key].get<bool>();
  };
  a.seed_changes_output = optional("seed_changes_output");
  a.input_changes_output = optional("input_changes_output");
  a.inputs_reused = optional("inputs_reused");
  a.outputs_unpoisoned = optional("outputs_unpoisoned");
  return a;
}

}  // namespace maxcode
