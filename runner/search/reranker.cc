#include "runner/search/reranker.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string_view>

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
      std::optional<llm::Reply> reply = spend_.complete(provider_, request);
      if (!reply) return std::nullopt;  // the budget is reached: unranked
      return parse_speedup_estimate(reply->text);
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

namespace {

// The first number in `text`, `[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?`, found by hand:
// std::regex recursed once per digit (a reply of 200,000 digits overflowed the stack),
// and std::stod threw on 1e999. nullopt when there is none or the first is no estimate.
std::optional<double> first_number(std::string_view text) {
  auto digit = [&](std::size_t i) { return i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); };
  for (std::size_t start = 0; start < text.size(); ++start) {
    std::size_t at = start;
    if (text[at] == '+' || text[at] == '-') ++at;
    if (!digit(at) && !(at < text.size() && text[at] == '.' && digit(at + 1))) continue;
    while (digit(at)) ++at;
    if (at < text.size() && text[at] == '.') ++at;
    while (digit(at)) ++at;
    if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
      std::size_t exponent = at + 1;
      if (exponent < text.size() && (text[exponent] == '+' || text[exponent] == '-')) ++exponent;
      if (digit(exponent)) {
        at = exponent;
        while (digit(at)) ++at;
      }
    }
    // An estimate is a few characters; one of hundreds is no estimate.
    if (at - start > 64) return std::nullopt;
    const std::string number(text.substr(start, at - start));
    errno = 0;
    const double value = std::strtod(number.c_str(), nullptr);
    if (errno == ERANGE || !(value >= 0 && value < 1e4)) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

// `text` without its fenced code blocks (a line starting ``` opens or closes one): a
// number in code is never the estimate.
std::string without_code(const std::string& text) {
  std::string prose;
  bool in_code = false;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = std::string_view(text).substr(start, end - start);
    const std::size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos && line.substr(first, 3) == "```") in_code = !in_code;
    else if (!in_code) prose.append(line);
    prose.push_back('\n');
    start = end + 1;
  }
  return prose;
}

}  // namespace

std::optional<double> parse_speedup_estimate(const std::string& whole_reply) {
  // Asked for one number, a reasoning model still thinks aloud first ("4 loads per
  // lane ... Final estimate: 1.5"): its answer is at the end. A labelled estimate wins
  // (the last label); otherwise the first number of the last line that has one.
  const std::string reply = without_code(whole_reply);
  std::string lower(reply.size(), ' ');
  std::transform(reply.begin(), reply.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // "Estimate: 1.5", "**Final estimate**: 1.5": the word, then a colon within three characters.
  for (std::size_t label = lower.rfind("estimate"); label != std::string::npos;
       label = label == 0 ? std::string::npos : lower.rfind("estimate", label - 1)) {
    const std::size_t colon = lower.find(':', label + 8);
    if (colon == std::string::npos || colon > label + 11) continue;
    const std::size_t line_end = reply.find('\n', colon);
    return first_number(std::string_view(reply).substr(colon + 1, line_end == std::string::npos ? std::string::npos
                                                                                              : line_end - colon - 1));
  }
  const std::size_t last_digit = reply.find_last_of("0123456789");
  if (last_digit == std::string::npos) return std::nullopt;
  const std::size_t line_end = reply.find('\n', last_digit);
  const std::size_t line_start = reply.rfind('\n', last_digit);
  const std::size_t from = line_start == std::string::npos ? 0 : line_start + 1;
  return first_number(std::string_view(reply).substr(from, (line_end == std::string::npos ? reply.size() : line_end) - from));
}

std::unique_ptr<Reranker> make_llm_reranker(const TargetContext& context, llm::Provider& provider,
                                            const Prompts& prompts, Spend& spend) {
  return std::make_unique<LlmReranker>(context, provider, prompts, spend);
}

}  // namespace maxcode
