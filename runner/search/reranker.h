// Reward-to-go reranking: before any candidate is built, a model estimates the best
// speedup the search can still reach from it, and only the n most promising of the k
// proposals are evaluated. Saves build and GPU time; any provider can serve it (e.g. a
// fine-tuned small model behind vLLM).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "runner/search/critic.h"
#include "runner/search/policy.h"
#include "runner/search/spend.h"

namespace maxcode {

class Reranker {
 public:
  virtual ~Reranker() = default;
  virtual std::string name() const = 0;
  // The estimate, or nothing when the model gave no usable number. Thread-safe. Throws
  // llm::LlmError only for errors that stop the run.
  virtual std::optional<double> score(const SearchState& state, const Candidate& candidate) = 0;
};

std::unique_ptr<Reranker> make_llm_reranker(const TargetContext& context, llm::Provider& provider,
                                            const Prompts& prompts, Spend& spend);

// The model's estimate in `reply`, if it is a plausible speedup: the number after the
// last "estimate:" label, else the first number of the last line that has one
// ("About 1.8x" -> 1.8; "4 lanes ...\nFinal estimate: 1.5" -> 1.5).
std::optional<double> parse_speedup_estimate(const std::string& reply);

}  // namespace maxcode
