#include "runner/search/reranker.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

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
  // The first number in the reply, `[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?`, found by hand:
  // std::regex recursed once per digit (a reply of 200,000 digits overflowed the stack),
  // and std::stod threw on 1e999.
  auto digit = [&](std::size_t i) { return i < reply.size() && std::isdigit(static_cast<unsigned char>(reply[i])); };
  for (std::size_t start = 0; start < reply.size(); ++start) {
    std::size_t at = start;
    if (reply[at] == '+' || reply[at] == '-') ++at;
    if (!digit(at) && !(at < reply.size() && reply[at] == '.' && digit(at + 1))) continue;
    while (digit(at)) ++at;
    if (at < reply.size() && reply[at] == '.') ++at;
    while (digit(at)) ++at;
    if (at < reply.size() && (reply[at] == 'e' || reply[at] == 'E')) {
      std::size_t exponent = at + 1;
      if (exponent < reply.size() && (reply[exponent] == '+' || reply[exponent] == '-')) ++exponent;
      if (digit(exponent)) {
        at = exponent;
        while (digit(at)) ++at;
      }
    }
    // An estimate is a few characters; one of hundreds is no estimate.
    if (at - start > 64) return std::nullopt;
    const std::string number = reply.substr(start, at - start);
    errno = 0;
    const double value = std::strtod(number.c_str(), nullptr);
    if (errno == ERANGE || !(value >= 0 && value < 1e4)) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

std::unique_ptr<Reranker> make_llm_reranker(const TargetContext& context, llm::Provider& provider,
                                            const Prompts& prompts, Spend& spend) {
  return std::make_unique<LlmReranker>(context, provider, prompts, spend);
}

}  // namespace maxcode
