#include "runner/core/search_choices.h"

#include "runner/util/enum_names.h"

namespace maxcode {

namespace {

constexpr EnumNames<SearchPolicy, 5> kPolicyNames{{
    {SearchPolicy::kTune, "tune"},
    {SearchPolicy::kReplay, "replay"},
    {SearchPolicy::kMaxcode, "maxcode"},
    {SearchPolicy::kCudaLlm, "cuda-llm"},
    {SearchPolicy::kEffilearner, "effilearner"},
}};

constexpr EnumNames<CriticChoice, 4> kCriticNames{{
    {CriticChoice::kAuto, "auto"},
    {CriticChoice::kMetrics, "metrics"},
    {CriticChoice::kLlm, "llm"},
    {CriticChoice::kNone, "none"},
}};

constexpr EnumNames<RerankerChoice, 3> kRerankerNames{{
    {RerankerChoice::kAuto, "auto"},
    {RerankerChoice::kLlm, "llm"},
    {RerankerChoice::kNone, "none"},
}};

}  // namespace

std::string search_policy_name(SearchPolicy policy) { return enum_name(kPolicyNames, policy); }
std::string critic_choice_name(CriticChoice critic) { return enum_name(kCriticNames, critic); }
std::string reranker_choice_name(RerankerChoice reranker) { return enum_name(kRerankerNames, reranker); }

SearchPolicy search_policy_from_name(std::string_view name) { return enum_from_name(kPolicyNames, name, "policy"); }
std::optional<SearchPolicy> policy_named(std::string_view name) { return enum_named(kPolicyNames, name); }
CriticChoice critic_choice_from_name(std::string_view name) { return enum_from_name(kCriticNames, name, "critic"); }
RerankerChoice reranker_choice_from_name(std::string_view name) {
  return enum_from_name(kRerankerNames, name, "reranker");
}

std::vector<std::string_view> search_policy_names() { return enum_names_of(kPolicyNames); }
std::vector<std::string_view> critic_choice_names() { return enum_names_of(kCriticNames); }
std::vector<std::string_view> reranker_choice_names() { return enum_names_of(kRerankerNames); }

bool is_llm_policy(SearchPolicy policy) {
  return policy == SearchPolicy::kMaxcode || policy == SearchPolicy::kCudaLlm || policy == SearchPolicy::kEffilearner;
}

}  // namespace maxcode
