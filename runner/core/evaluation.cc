#include "runner/core/evaluation.h"

#include <algorithm>

#include "runner/util/enum_names.h"
#include "runner/util/format.h"

namespace maxcode {

namespace {

constexpr EnumNames<Verdict, 10> kVerdictNames{{
    {Verdict::kFaster, "faster"},
    {Verdict::kNotFaster, "not-faster"},
    {Verdict::kIncorrect, "incorrect"},
    {Verdict::kCompileError, "compile-error"},
    {Verdict::kTestFailed, "test-failed"},
    {Verdict::kTimeout, "timeout"},
    {Verdict::kCrashed, "crashed"},
    {Verdict::kLimit, "limit"},
    {Verdict::kRejected, "rejected"},
    {Verdict::kUnverifiable, "unverifiable"},
}};

}  // namespace

// The table's names are string literals, so their data() ends in a NUL.
const char* verdict_name(Verdict verdict) {
  for (const auto& [value, name] : kVerdictNames)
    if (value == verdict) return name.data();
  return "unknown";
}

nlohmann::json to_json(const RatioInterval& interval) {
  return {{"median", interval.median}, {"low", interval.low}, {"high", interval.high},
          {"rounds", interval.rounds}};
}

int Timing::contended_rounds() const {
  int n = 0;
  for (std::size_t i = 0; i < baseline_cpu_pressure.size() && i < candidate_cpu_pressure.size(); ++i)
    n += std::max(baseline_cpu_pressure[i], candidate_cpu_pressure[i]) > kContendedPressure;
  return n;
}

std::string Timing::contention_note() const {
  const int contended = contended_rounds();
  if (contended == 0) return "";
  const auto percent = [](double share) { return format_numbers("%.0f%%", 100 * share); };
  return std::to_string(contended) + " of " + std::to_string(baseline_cpu_pressure.size()) +
         " rounds ran with the CPUs contended: some task on this machine waited for a CPU during more than " +
         percent(kContendedPressure) + " of a timed run (median " + percent(median(baseline_cpu_pressure)) +
         " of the original's runs, " + percent(median(candidate_cpu_pressure)) +
         " of the candidate's; /proc/pressure/cpu). On a loaded machine the longer run is preempted more, so a "
         "wall-time ratio reads high.";
}

int Timing::throttled_rounds() const {
  int n = 0;
  for (bool t : throttled) n += t;
  return n;
}

nlohmann::json to_json(const Timing& timing) {
  nlohmann::json j = {{"speedup", to_json(timing.speedup)},
          {"baseline_median_s", timing.baseline_median_s},
          {"candidate_median_s", timing.candidate_median_s},
          {"baseline_s", timing.baseline_s},
          {"candidate_s", timing.candidate_s},
          {"noise_floor", timing.noise_floor},
          {"min_speedup", timing.min_speedup},
          {"significant", timing.significant},
          {"stop_reason", timing.stop_reason},
          {"drifted", timing.drifted},
          {"process_floor_s", timing.process_floor_s},
          {"session_s", timing.session_s}};
  if (!timing.device.empty()) {
    j["device"] = timing.device;
    j["lock_wait_s"] = timing.lock_wait_s;
    j["baseline_sm_mhz"] = timing.baseline_sm_mhz;
    j["candidate_sm_mhz"] = timing.candidate_sm_mhz;
    j["throttled"] = timing.throttled;
    j["throttled_rounds"] = timing.throttled_rounds();
  }
  if (!timing.baseline_cpu_pressure.empty()) {
    j["baseline_cpu_pressure"] = timing.baseline_cpu_pressure;
    j["candidate_cpu_pressure"] = timing.candidate_cpu_pressure;
    j["contended_rounds"] = timing.contended_rounds();
  }
  if (!timing.entries.empty()) {
    nlohmann::json entries = nlohmann::json::array();
    for (const Timing::Entry& e : timing.entries)
      entries.push_back({{"benchmark", e.benchmark},
                         {"name", e.name},
                         {"baseline_median_s", e.baseline_median_s},
                         {"candidate_median_s", e.candidate_median_s},
                         {"speedup", e.candidate_median_s > 0 ? e.baseline_median_s / e.candidate_median_s : 0.0}});
    j["entries"] = entries;
  }
  if (timing.roofline_floor_s > 0) {
    j["roofline"] = {{"floor_s", timing.roofline_floor_s},
                     {"baseline_pct", 100 * timing.roofline_floor_s / timing.baseline_median_s},
                     {"candidate_pct", 100 * timing.roofline_floor_s / timing.candidate_median_s}};
  }
  return j;
}

nlohmann::json to_json(const Evaluation& e) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : e.steps) {
    nlohmann::json step{{"name", s.name}, {"command", s.command}, {"status", s.status},
                        {"wall_s", s.wall_s}};
    if (!s.output_tail.empty()) step["output_tail"] = s.output_tail;
    steps.push_back(std::move(step));
  }
  nlohmann::json j{{"id", e.candidate_id},
                   {"verdict", verdict_name(e.verdict)},
                   {"reason", e.reason},
                   {"source_hash", e.source_hash},
                   {"steps", steps},
                   {"isolation", e.isolation},
                   {"wall_s", e.wall_s},
                   {"child_s", e.child_s},
                   {"reward", e.reward()}};
  if (e.duplicate_of) j["duplicate_of"] = *e.duplicate_of;
  if (!e.compiler_output.empty()) j["compiler_output"] = e.compiler_output;
  if (!e.test_output.empty()) j["test_output"] = e.test_output;
  if (!e.mismatch.empty()) j["mismatch"] = e.mismatch;
  if (e.timing) {
    j["timing"] = to_json(*e.timing);
    j["speedup"] = to_json(e.timing->speedup);
  } else {
    j["speedup"] = nullptr;
  }
  if (!e.code.empty()) j["code"] = e.code;
  if (!e.critique.empty()) {
    j["critique"] = e.critique;
    j["critic"] = e.critic;
  }
  if (!e.gpu.empty()) j["gpu"] = e.gpu;
  if (!e.tests.empty()) j["tests"] = e.tests;
  if (!e.call_check.empty()) j["call_check"] = e.call_check;
  if (e.witness) j["witness"] = to_json(*e.witness);
  if (!e.precision.empty()) {
    j["precision"] = nlohmann::json::array();
    for (const OutputError& p : e.precision) j["precision"].push_back(to_json(p));
  }
  return j;
}

Verdict verdict_from_name(const std::string& name) { return enum_from_name(kVerdictNames, name, "verdict"); }

RatioInterval interval_from_json(const nlohmann::json& j) {
  return RatioInterval{j.at("median").get<double>(), j.at("low").get<double>(), j.at("high").get<double>(),
                       j.at("rounds").get<int>()};
}

Timing timing_from_json(const nlohmann::json& j) {
  Timing t;
  t.baseline_s = j.at("baseline_s").get<std::vector<double>>();
  t.candidate_s = j.at("candidate_s").get<std::vector<double>>();
  t.speedup = interval_from_json(j.at("speedup"));
  t.baseline_median_s = j.at("baseline_median_s").get<double>();
  t.candidate_median_s = j.at("candidate_median_s").get<double>();
  t.noise_floor = j.at("noise_floor").get<double>();
  t.min_speedup = j.at("min_speedup").get<double>();
  t.significant = j.at("significant").get<bool>();
  t.stop_reason = j.value("stop_reason", "");
  t.drifted = j.value("drifted", false);
  t.process_floor_s = j.value("process_floor_s", 0.0);
  t.session_s = j.value("session_s", 0.0);
  t.device = j.value("device", "");
  t.lock_wait_s = j.value("lock_wait_s", 0.0);
  t.baseline_sm_mhz = j.value("baseline_sm_mhz", std::vector<unsigned>{});
  t.candidate_sm_mhz = j.value("candidate_sm_mhz", std::vector<unsigned>{});
  t.throttled = j.value("throttled", std::vector<bool>{});
  t.baseline_cpu_pressure = j.value("baseline_cpu_pressure", std::vector<double>{});
  t.candidate_cpu_pressure = j.value("candidate_cpu_pressure", std::vector<double>{});
  if (j.contains("roofline")) t.roofline_floor_s = j["roofline"].value("floor_s", 0.0);
  if (j.contains("entries") && j["entries"].is_array())
    for (const nlohmann::json& e : j["entries"])
      t.entries.push_back({e.at("benchmark").get<std::string>(), e.at("name").get<std::string>(),
                           e.at("baseline_median_s").get<double>(), e.at("candidate_median_s").get<double>()});
  return t;
}

Evaluation evaluation_from_json(const nlohmann::json& j) {
  Evaluation e;
  e.candidate_id = j.at("id").get<std::string>();
  e.verdict = verdict_from_name(j.at("verdict").get<std::string>());
  e.reason = j.value("reason", "");
  e.source_hash = j.value("source_hash", "");
  if (j.contains("duplicate_of")) e.duplicate_of = j["duplicate_of"].get<std::string>();
  for (const auto& s : j.value("steps", nlohmann::json::array()))
    e.steps.push_back({s.value("name", ""), s.value("command", ""), s.value("status", ""), s.value("wall_s", 0.0),
                       s.value("output_tail", "")});
  e.compiler_output = j.value("compiler_output", "");
  e.test_output = j.value("test_output", "");
  e.mismatch = j.value("mismatch", "");
  if (j.contains("timing")) e.timing = timing_from_json(j["timing"]);
  e.isolation = j.value("isolation", "");
  e.wall_s = j.value("wall_s", 0.0);
  e.child_s = j.value("child_s", 0.0);
  e.code = j.value("code", "");
  e.critique = j.value("critique", "");
  e.critic = j.value("critic", "");
  if (j.contains("gpu") && j["gpu"].is_object()) e.gpu = j["gpu"];
  if (j.contains("tests") && j["tests"].is_object()) e.tests = j["tests"];
  e.call_check = j.value("call_check", "");
  if (j.contains("witness") && j["witness"].is_object()) e.witness = witness_record_from_json(j["witness"]);
  if (j.contains("precision") && j["precision"].is_array())
    for (const auto& p : j["precision"]) e.precision.push_back(output_error_from_json(p));
  return e;
}

}  // namespace maxcode
