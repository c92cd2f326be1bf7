#include "runner/search/reranker.h"

#include <cstdio>
#include <regex>

namespace maxcode {

namespace {

class LlmReranker : public Reranker {
 public:
  LlmReranker(TargetContext context, llm::Provider& provider, const Prompts& prompts, Spend& spend)
      : context_(std::move(context)), provider_(provider), prompts_(prompts), spend_(spend) {}
  std::string name() const override { return "llm " + provider_.describe(); }

  std::optional<double> score(const SearchState& state, const Candidate& candidate) override {
    const TrajectoryEntry* best = state.best_entry();
    char best_speedup[32];
    std::snprintf(best_speedup, sizeof best_speedup, "%.2f", best ? best->evaluation.reward() : 1.0);
    llm::Request request;
    request.purpose = "rerank";
    request.max_tokens = 16;
    request.temperature = 0.0;
    request.messages = {
        {"system", prompts_.system},
        {"user", render_template(prompts_.rerank,
                                 {{"function", context_.target.function},
                                  {"file", context_.target.file},
                                  {"language", context_.language},
                                  {"original", context_.original},
                                  {"attempts", std::to_string(state.trajectory.size())},
                                  {"best_speedup", best_speedup},
                                  {"candidate", candidate.definition ? *candidate.definition : "(no code)"}})}};
    try {
      llm::Reply reply = provider_.complete(request);
      spend_.add(reply.usage);
      return parse_speedup_estimate(reply.text);
    } catch (const llm::LlmError& error) {
      if (error.stops_run()) throw;
      return std::nullopt;  // unranked: evaluated only if there is room
    }
  }

 private:
  TargetContext context_;
  llm::Provider& provider_;
  const Prompts prompts_;  // a copy: a few strings, and no lifetime to get wrong
  Spend& spend_;
};

}  // namespace

std::optional<double> parse_speedup_estimate(const std::string& reply) {
  static const std::regex number(R"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)");
  std::smatch m;
  if (!std::regex_search(reply, m, number)) return std::nullopt;
  const double value = std::stod(m.str());
  if (!(value >= 0 && value < 1e4)) return std::nullopt;
  return value;
}

std::unique_ptr<Reranker> make_llm_reranker(const TargetContext& context, llm::Provider& provider,
                                            const Prompts& prompts, Spend& spend) {
  return std::make_unique<LlmReranker>(context, provider, prompts, spend);
}

}  // namespace maxcode
