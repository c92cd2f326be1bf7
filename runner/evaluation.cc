#include "runner/evaluation.h"

namespace maxcode {

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kFaster: return "faster";
    case Verdict::kNotFaster: return "not-faster";
    case Verdict::kIncorrect: return "incorrect";
    case Verdict::kCompileError: return "compile-error";
    case Verdict::kTestFailed: return "test-failed";
    case Verdict::kTimeout: return "timeout";
    case Verdict::kCrashed: return "crashed";
    case Verdict::kRejected: return "rejected";
  }
  return "unknown";
}

nlohmann::json to_json(const RatioInterval& interval) {
  return {{"median", interval.median}, {"low", interval.low}, {"high", interval.high},
          {"rounds", interval.rounds}};
}

nlohmann::json to_json(const Timing& timing) {
  return {{"speedup", to_json(timing.speedup)},
          {"baseline_median_s", timing.baseline_median_s},
          {"candidate_median_s", timing.candidate_median_s},
          {"baseline_s", timing.baseline_s},
          {"candidate_s", timing.candidate_s},
          {"noise_floor", timing.noise_floor},
          {"min_speedup", timing.min_speedup},
          {"significant", timing.significant},
          {"stop_reason", timing.stop_reason}};
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
  return j;
}

}  // namespace maxcode
