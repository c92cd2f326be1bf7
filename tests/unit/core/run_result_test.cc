// result.json written and read through one type: what the report writes reads back the
// same, fields may be absent, and a field of the wrong type is named by its path.
#include <gtest/gtest.h>

#include "runner/core/run_result.h"

namespace maxcode {
namespace {

using nlohmann::json;

RunResult sample() {
  RunResult r;
  r.command = "optimize";
  r.repository = {"/src/histo", std::string(40, 'a'), {}};
  r.target = {"src/h.cpp", "histogram", "void histogram()", 3, 9, {"histogram", "lane"}, {}};
  r.policy = "replay";
  r.environment = {{"maxcode", "0.1.0"}, {"cores", 16}};
  r.settings = {{"min_speedup", 1.05}};
  Evaluation e;
  e.candidate_id = "w.cpp";
  e.verdict = Verdict::kFaster;
  e.timing = Timing{};
  e.timing->speedup = {1.5, 1.4, 1.6, 12};
  e.critique = "four lanes";
  e.critic = "metrics";
  r.candidates = {{2, "replay", json{{"lanes", "4"}}, "a note", e}};
  ResultWinner w;
  w.id = "w.cpp";
  w.confirmed.speedup = {1.45, 1.41, 1.52, 20};
  w.confirmed.baseline_median_s = 0.3;
  w.confirmed.candidate_median_s = 0.2;
  w.confirmed.entries = {{"bench", "BM_x", 2e-3, 1e-3}};
  w.confirmed.baseline_cpu_pressure = {0.0, 0.31};
  w.confirmed.candidate_cpu_pressure = {0.02, 0.0};
  w.search_speedup = e.timing->speedup;
  OutputError p;
  p.output = "out";
  p.type = "float";
  p.values = 10;
  w.precision = {p};
  w.call_check = "40 calls";
  WitnessRecord witness;
  witness.status = WitnessStatus::kAgrees;
  witness.witness_speedup = 1.4;
  w.witness = witness;
  r.winner = w;
  r.stop_reason = "budget";
  r.evaluations = 1;
  r.warnings = {"loud"};
  BenchmarkAudit audit;
  audit.benchmark = "main";
  audit.calls = 40;
  audit.inputs_reused = true;
  audit.findings = {"reuses its input"};
  r.audit = {audit};
  r.started_at = "2026-01-02T03:04:05Z";
  r.wall_s = 12.5;
  r.spend = {{"tokens", 10}};
  return r;
}

TEST(RunResult, WhatIsWrittenReadsBackTheSame) {
  const json written = to_json(sample());
  const RunResult read = run_result_from_json(written);
  EXPECT_EQ(to_json(read), written);
  ASSERT_TRUE(read.winner);
  EXPECT_DOUBLE_EQ(read.winner->confirmed.speedup.median, 1.45);
  EXPECT_EQ(read.winner->confirmed.baseline_cpu_pressure, (std::vector<double>{0.0, 0.31}));
  EXPECT_EQ(read.winner->confirmed.contended_rounds(), 1);
  EXPECT_EQ(written["winner"]["confirmation"]["contended_rounds"], 1) << written["winner"].dump();
  ASSERT_TRUE(read.winner->witness);
  EXPECT_EQ(read.winner->witness->status, WitnessStatus::kAgrees);
  ASSERT_EQ(read.candidates.size(), 1u);
  EXPECT_EQ(read.candidates[0].evaluation.verdict, Verdict::kFaster);
  EXPECT_EQ(read.candidate("w.cpp"), &read.candidates[0]);
  EXPECT_EQ(read.candidate("other.cpp"), nullptr);
  EXPECT_EQ(read.environment_text("maxcode"), "0.1.0");
  EXPECT_EQ(read.environment_text("cores"), "");  // not a string
  ASSERT_EQ(read.audit.size(), 1u);
  EXPECT_EQ(read.audit[0].inputs_reused, std::optional<bool>(true));
  EXPECT_EQ(read.audit[0].seed_changes_output, std::nullopt);
}

TEST(RunResult, AbsentFieldsKeepTheirDefaults) {
  const RunResult r = run_result_from_json(
      {{"schema", kResultSchema}, {"target", {{"file", "a.cc"}, {"function", "f"}}}, {"winner", nullptr}});
  EXPECT_EQ(r.target.function, "f");
  EXPECT_FALSE(r.winner);
  EXPECT_TRUE(r.candidates.empty());
  EXPECT_FALSE(r.unconfirmed);
}

std::string error_of(const json& j) {
  try {
    run_result_from_json(j, "out/result.json");
  } catch (const RunResultError& e) {
    return e.what();
  }
  return "no error";
}

TEST(RunResult, AWrongFieldIsNamedByItsPath) {
  json j = to_json(sample());
  json other = j;
  other["schema"] = "maxcode.result/2";
  EXPECT_EQ(error_of(other), "out/result.json: schema: 'maxcode.result/2', this maxcode reads maxcode.result/1");
  other = j;
  other.erase("target");
  EXPECT_EQ(error_of(other), "out/result.json: target: missing required field");
  other = j;
  other["target"]["function"] = "";
  EXPECT_EQ(error_of(other), "out/result.json: target.function: must not be empty");
  other = j;
  other["winner"]["witness"]["status"] = 3;
  EXPECT_NE(error_of(other).find("out/result.json: winner.witness: "), std::string::npos) << error_of(other);
  other = j;
  other["candidates"][0]["verdict"] = "fastest";
  EXPECT_EQ(error_of(other), "out/result.json: candidates[0]: unknown verdict 'fastest'");
  other = j;
  other["warnings"] = {1};
  EXPECT_EQ(error_of(other), "out/result.json: warnings[0]: expected a string, got a number");
  other = j;
  other["winner"]["confirmation"].erase("candidate_s");
  EXPECT_EQ(error_of(other), "out/result.json: winner.confirmation: key 'candidate_s' not found");
  other = j;
  other.erase("schema");
  EXPECT_EQ(error_of(other), "out/result.json: schema: missing; this maxcode reads maxcode.result/1");
  other = j;
  other["winner"]["confirmation"] = nullptr;  // null is absent in maxcode's own documents
  EXPECT_EQ(error_of(other),
            "out/result.json: winner.confirmation: missing required field (the confirmation session's timing)");
  other = j;
  other["candidates"] = json::object();
  EXPECT_EQ(error_of(other), "out/result.json: candidates: expected an array, got an object");
  other = j;
  other["target"]["line_begin"] = 1.5;
  EXPECT_EQ(error_of(other), "out/result.json: target.line_begin: expected an integer, got 1.5");
  EXPECT_EQ(error_of(json::array()), "out/result.json: expected an object, got an array");
}

}  // namespace
}  // namespace maxcode
