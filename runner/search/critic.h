// Critics: a natural-language diagnosis of each attempt, which the next proposal sees.
// `metrics` turns the evaluation record into a diagnosis by fixed rules (no endpoint
// needed, deterministic); `llm` asks a model, with the same record.
#pragma once

#include <memory>
#include <string>

#include "runner/core/evaluation.h"
#include "runner/llm/provider.h"
#include "runner/search/prompts.h"
#include "runner/core/target.h"
#include "runner/workspace/unit.h"

namespace maxcode {

// What every critic and policy knows about the target.
struct TargetContext {
  Target target;         // target.unit: the unit's functions (prompts say which may change)
  std::string language;  // "cpp" or "cuda" (fence info string)
  std::string original;  // the original definitions of the unit, in file order
  std::string context;   // the file around them, the definitions elided, capped
};
TargetContext make_target_context(const Target& target, const std::string& file_text,
                                  const std::string& original_definition);
// The same for a unit (unit.h) in `file_text`: every definition of the unit shown as the
// original and elided from the context.
TargetContext make_target_context(const Target& target, const std::string& file_text, const Unit& unit);

class Critic {
 public:
  virtual ~Critic() = default;
  virtual std::string name() const = 0;
  // A diagnosis of `evaluation` (of the candidate whose code it records). Thread-safe.
  // Throws llm::LlmError only for errors that stop the run.
  virtual std::string critique(const Evaluation& evaluation) = 0;
};

std::unique_ptr<Critic> make_metrics_critic(const TargetContext& context);
// Falls back to the metrics critic (and says so) when a call fails for one candidate.
class Spend;
std::unique_ptr<Critic> make_llm_critic(const TargetContext& context, llm::Provider& provider,
                                        const Prompts& prompts, Spend* spend = nullptr);

}  // namespace maxcode
