// Policies: where candidates come from. The search loop is the same for all of them;
// a policy only looks at the search state and proposes what to evaluate next.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/core/candidate.h"
#include "runner/core/evaluation.h"
#include "runner/core/search_choices.h"
#include "runner/core/target.h"
#include "runner/util/error.h"
#include "runner/workspace/knobs.h"

namespace maxcode {

struct TrajectoryEntry {
  int step = 0;
  Candidate candidate;
  Evaluation evaluation;
};

// What a policy sees: the original, every attempt so far with its evaluation, and the
// best so far (the max-reward objective keeps the best, not the last).
struct SearchState {
  Target target;
  std::string original_definition;
  std::vector<TrajectoryEntry> trajectory;
  std::optional<std::size_t> best;  // index into trajectory of the best faster candidate
  int evaluations = 0;  // candidates built and checked (unusable replies and rejected code are not)
  // Candidates proposed so far, those the reranker dropped included: a resumed policy
  // numbers its next candidate after them, so that no id is used twice (rollouts feed
  // training data, where one id must be one candidate).
  int proposed = 0;
  const TrajectoryEntry* best_entry() const { return best ? &trajectory[*best] : nullptr; }
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // Up to `count` new candidates; none when the policy has nothing left to try.
  virtual std::vector<Candidate> propose(const SearchState& state, int count) = 0;
  // After a resume: `state` holds what earlier sessions tried; do not propose it again.
  virtual void resume(const SearchState& state) { (void)state; }
};

class PolicyError : public Error {
 public:
  using Error::Error;
};

// Searches knob values: every combination when they fit the budget, else random
// samples for half of it and then a local search around the best so far.
std::unique_ptr<Policy> make_tune_policy(std::vector<Knob> knobs, int budget, std::uint64_t seed);

// Candidates from files in `directory`, in name order: each file is either a complete
// new definition of the target (helpers may precede it) or a unified diff.
std::unique_ptr<Policy> make_replay_policy(const std::filesystem::path& directory);

struct TargetContext;
struct Prompts;
class Spend;
namespace llm { class Provider; }

// Observations of the LLM presets (docs/method.md "Policies"):
//   "maxcode"     the best so far with its feedback, the trajectory with feedback and
//                 critiques; fix a compile error, else a logic error, else beat the best
//   "cuda-llm"    iterative refinement on the raw feedback of the latest attempt
//   "effilearner" self-refinement of the current best from its execution profile
// Throws PolicyError for a policy that is not one of them.
std::unique_ptr<Policy> make_llm_policy(SearchPolicy preset, const TargetContext& context, llm::Provider& provider,
                                        const Prompts& prompts, Spend& spend, int trajectory_window = 8);

// Whether some candidate file in `directory` (as replay reads them) defines one of
// `unit_names` or is a diff that changes `file` (repository-relative).
bool replay_reaches(const std::filesystem::path& directory, const std::vector<std::string>& unit_names,
                    const std::string& file);

// Reads one candidate file (definition or diff) as replay does.
Candidate read_candidate_file(const std::filesystem::path& file, const std::string& origin);

}  // namespace maxcode
