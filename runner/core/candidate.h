// Candidate: one proposed rewrite of the target, in the forms a policy can produce.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace maxcode {

struct Candidate {
  std::string id;      // unique within a search; for replay, the file name
  std::string origin;  // policy that made it: "tune", "replay", "cli"
  // Exactly one way of changing the code, or only knobs:
  std::optional<std::string> definition;  // new text for the target's definition (helpers may precede it)
  std::optional<std::string> diff;        // unified diff against the repository root
  std::map<std::string, std::string> knobs;  // knob name -> value, applied by the harness
  std::string note;    // free text for reports (e.g. "neighbour of LANES=4")
  // Set when the proposal itself is unusable (an LLM reply with no code, a refusal, a
  // definition cut off): the candidate is rejected with this reason, nothing is built.
  std::optional<std::string> error;
  std::string rationale;       // the model's words around its code, if any
  std::string prompt_summary;  // what the policy showed the model (for the rollout store)
  std::optional<double> rerank_score;  // reward-to-go estimate, when a reranker ran
  long tokens = 0;             // LLM tokens spent making it
  double cost_usd = 0;
};

inline nlohmann::json to_json(const Candidate& c) {
  nlohmann::json j{{"id", c.id}, {"origin", c.origin}, {"knobs", c.knobs}};
  if (c.definition) j["definition"] = *c.definition;
  if (c.diff) j["diff"] = *c.diff;
  if (!c.note.empty()) j["note"] = c.note;
  if (c.error) j["error"] = *c.error;
  if (!c.rationale.empty()) j["rationale"] = c.rationale;
  if (!c.prompt_summary.empty()) j["prompt_summary"] = c.prompt_summary;
  if (c.rerank_score) j["rerank_score"] = *c.rerank_score;
  if (c.tokens) j["tokens"] = c.tokens;
  if (c.cost_usd > 0) j["cost_usd"] = c.cost_usd;
  return j;
}

inline Candidate candidate_from_json(const nlohmann::json& j) {
  Candidate c;
  c.id = j.at("id").get<std::string>();
  c.origin = j.value("origin", "");
  if (j.contains("definition")) c.definition = j["definition"].get<std::string>();
  if (j.contains("diff")) c.diff = j["diff"].get<std::string>();
  if (j.contains("knobs")) c.knobs = j["knobs"].get<std::map<std::string, std::string>>();
  c.note = j.value("note", "");
  if (j.contains("error")) c.error = j["error"].get<std::string>();
  c.rationale = j.value("rationale", "");
  c.prompt_summary = j.value("prompt_summary", "");
  if (j.contains("rerank_score")) c.rerank_score = j["rerank_score"].get<double>();
  c.tokens = j.value("tokens", 0L);
  c.cost_usd = j.value("cost_usd", 0.0);
  return c;
}

}  // namespace maxcode
