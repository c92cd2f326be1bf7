// The named choices of the config's `search`: who proposes candidates (the policy), who
// critiques them and who reranks them. The config, a job's override, a checkpoint and
// the reports hold them by name; the code compares the enums.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace maxcode {

// "tune" and "replay", or an LLM preset: "maxcode", "cuda-llm", "effilearner"
// (docs/method.md), which need llm.propose.
enum class SearchPolicy { kTune, kReplay, kMaxcode, kCudaLlm, kEffilearner };
// "auto": the LLM critic when llm.critique is set, else "metrics" (rule-based); "none".
enum class CriticChoice { kAuto, kMetrics, kLlm, kNone };
// "auto": the LLM reranker when llm.rerank is set, else none.
enum class RerankerChoice { kAuto, kLlm, kNone };

std::string search_policy_name(SearchPolicy policy);
std::string critic_choice_name(CriticChoice critic);
std::string reranker_choice_name(RerankerChoice reranker);

// The value of that name; each throws std::invalid_argument naming a name that is none.
SearchPolicy search_policy_from_name(std::string_view name);
// The policy `name` names, or nothing (a job's "policy", `maxcode run --policy`).
std::optional<SearchPolicy> policy_named(std::string_view name);
CriticChoice critic_choice_from_name(std::string_view name);
RerankerChoice reranker_choice_from_name(std::string_view name);

// Every name, in the order of the enum: the choices an error lists.
std::vector<std::string_view> search_policy_names();
std::vector<std::string_view> critic_choice_names();
std::vector<std::string_view> reranker_choice_names();

// The presets an LLM proposes for.
bool is_llm_policy(SearchPolicy policy);

inline std::ostream& operator<<(std::ostream& out, SearchPolicy policy) { return out << search_policy_name(policy); }
inline std::ostream& operator<<(std::ostream& out, CriticChoice critic) { return out << critic_choice_name(critic); }
inline std::ostream& operator<<(std::ostream& out, RerankerChoice reranker) {
  return out << reranker_choice_name(reranker);
}

}  // namespace maxcode
