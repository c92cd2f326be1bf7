// The LLM policies: one prompt per step built from the search state (what the model
// observes differs per preset), k replies requested concurrently, each parsed into a
// candidate or a clear per-candidate failure.
#include <algorithm>
#include <cstdlib>
#include <future>
#include <optional>

#include "runner/search/critic.h"
#include "runner/search/feedback.h"
#include "runner/search/policy.h"
#include "runner/search/prompts.h"
#include "runner/search/reply.h"
#include "runner/search/spend.h"

namespace maxcode {

namespace {

std::string fenced(const std::string& language, const std::string& code) {
  return "```" + language + "\n" + code + "\n```\n";
}

const TrajectoryEntry* latest_evaluated(const SearchState& state) {
  for (auto it = state.trajectory.rbegin(); it != state.trajectory.rend(); ++it)
    if (!it->evaluation.duplicate_of) return &*it;
  return nullptr;
}

class LlmPolicy : public Policy {
 public:
  LlmPolicy(SearchPolicy preset, TargetContext context, llm::Provider& provider, const Prompts& prompts, Spend& spend,
            int window)
      : preset_(preset),
        name_(search_policy_name(preset)),
        context_(std::move(context)),
        provider_(provider),
        prompts_(prompts),
        spend_(spend),
        window_(window) {}

  std::string name() const override { return name_; }

  void resume(const SearchState& state) override {
    counter_ = state.proposed;
    const std::string prefix = name_ + "-";
    for (const TrajectoryEntry& e : state.trajectory)  // a checkpoint from before `proposed` was kept
      if (e.candidate.id.rfind(prefix, 0) == 0)
        counter_ = std::max(counter_, std::atoi(e.candidate.id.c_str() + prefix.size()));
  }

  std::vector<Candidate> propose(const SearchState& state, int count) override {
    llm::Request request;
    request.purpose = "propose";
    request.messages = {{"system", prompts_.system}, {"user", render_prompt(state)}};
    const std::string summary = summarize(state);
    std::vector<std::future<std::optional<Candidate>>> replies;
    for (int i = 0; i < count; ++i)
      replies.push_back(std::async(std::launch::async, [this, request, summary] { return ask(request, summary); }));
    std::vector<Candidate> out;
    std::exception_ptr stop;
    for (auto& f : replies) {
      try {
        if (std::optional<Candidate> c = f.get()) out.push_back(std::move(*c));
      } catch (...) {
        if (!stop) stop = std::current_exception();  // collect the rest before stopping
      }
    }
    if (stop) std::rethrow_exception(stop);
    // Numbered once the replies are in, in the order asked: a call the budget refused
    // takes no number.
    for (Candidate& c : out) c.id = name_ + "-" + std::to_string(++counter_);
    return out;
  }

 private:
  // One candidate from one call, asked again once with the reason when the reply holds
  // nothing usable (no code, several blocks cut off, the wrong function); nullopt when
  // the budget refused the call.
  std::optional<Candidate> ask(const llm::Request& request, const std::string& summary) {
    Candidate c;
    c.origin = name_;
    c.prompt_summary = summary;
    try {
      std::optional<llm::Reply> reply = spend_.complete(provider_, request);
      if (!reply) return std::nullopt;
      ParsedReply parsed = read(*reply, c);
      if (!parsed.code && !declined(parsed)) {
        llm::Request again = request;
        again.messages.push_back({"assistant", reply->text});
        again.messages.push_back(
            {"user", "Your reply cannot be used: " + parsed.error + ". Answer again with one fenced ```" +
                         context_.language + " block that holds the complete new definition of `" +
                         context_.target.function + "` (helpers it needs may come first in the block)."});
        std::optional<llm::Reply> second = spend_.complete(provider_, again);
        if (second) {
          ParsedReply retry = read(*second, c);
          if (retry.code) parsed = std::move(retry);
          else parsed.error += "; asked again: " + retry.error;
        }
      }
      c.rationale = parsed.rationale.substr(0, 2000);
      if (parsed.code) {
        c.definition = *parsed.code;
      } else {
        spend_.add_unusable_reply();
        c.error = "LLM reply unusable: " + parsed.error;
      }
    } catch (const llm::LlmError& error) {
      if (error.stops_run()) throw;
      c.error = std::string("LLM call failed (") + llm::error_kind_name(error.kind()) + "): " + error.what();
    }
    return c;
  }

  ParsedReply read(const llm::Reply& reply, Candidate& c) const {
    c.tokens += reply.usage.input_tokens + reply.usage.output_tokens;
    c.cost_usd += reply.usage.cost_usd;
    return parse_reply(reply.text, context_.target.function, reply.finish_reason, context_.original);
  }

  // A refusal or a reply over the size limit is not asked again.
  static bool declined(const ParsedReply& parsed) {
    return parsed.error.rfind("the model declined", 0) == 0 || parsed.error.find(" bytes; a candidate is at most") !=
                                                                    std::string::npos;
  }

  std::string summarize(const SearchState& state) const {
    const TrajectoryEntry* best = state.best_entry();
    const TrajectoryEntry* last = latest_evaluated(state);
    return name_ + " observation: " + std::to_string(state.trajectory.size()) + " attempts; best " +
           (best ? best->candidate.id + " " + std::to_string(best->evaluation.reward()) + "x" : "none") +
           "; latest " + (last ? last->candidate.id + " " + verdict_name(last->evaluation.verdict) : "none");
  }

  // The paper's order of business: compile errors first, then wrong results, then speed.
  std::string instruction(const SearchState& state) const {
    const TrajectoryEntry* last = latest_evaluated(state);
    if (last && (last->evaluation.verdict == Verdict::kCompileError))
      return "The latest attempt does not compile. Fix the compile error (see its feedback) while keeping its idea.";
    if (last && (last->evaluation.verdict == Verdict::kIncorrect || last->evaluation.verdict == Verdict::kTestFailed ||
                 last->evaluation.verdict == Verdict::kCrashed || last->evaluation.verdict == Verdict::kTimeout ||
                 last->evaluation.verdict == Verdict::kLimit))
      return "The latest attempt gives wrong results or fails at run time. Fix the logic error (see its feedback) while keeping its idea.";
    if (state.best_entry()) return "Write a version that is faster than the best so far.";
    return "Write a version that is faster than the original.";
  }

  std::string attempt_text(const TrajectoryEntry& e, bool with_critique) const {
    std::string text = "### Attempt " + e.candidate.id + " — " + verdict_name(e.evaluation.verdict) + "\n";
    if (!e.evaluation.code.empty() && e.candidate.definition) text += fenced(context_.language, e.evaluation.code);
    else if (e.candidate.error) text += "(" + *e.candidate.error + ")\n";
    text += "Feedback:\n" + render_feedback(e.evaluation, 1500);
    if (with_critique && !e.evaluation.critique.empty()) text += "Critique: " + e.evaluation.critique + "\n";
    return text + "\n";
  }

  std::string render_prompt(const SearchState& state) const {
    std::string best, trajectory;
    const TrajectoryEntry* best_entry = state.best_entry();
    if (preset_ == SearchPolicy::kMaxcode) {
      if (best_entry)
        best = "\n## Best so far (" + std::to_string(best_entry->evaluation.reward()) + "x faster)\n" +
               fenced(context_.language, best_entry->evaluation.code) + "Feedback:\n" +
               render_feedback(best_entry->evaluation, 1500) +
               (best_entry->evaluation.critique.empty() ? "" : "Critique: " + best_entry->evaluation.critique + "\n");
      std::vector<const TrajectoryEntry*> shown;
      for (auto it = state.trajectory.rbegin(); it != state.trajectory.rend() && static_cast<int>(shown.size()) < window_; ++it)
        if (!it->evaluation.duplicate_of) shown.insert(shown.begin(), &*it);
      if (!shown.empty()) {
        trajectory = "\n## Earlier attempts (oldest first)\n";
        for (const TrajectoryEntry* e : shown) trajectory += attempt_text(*e, true);
      }
    } else if (preset_ == SearchPolicy::kCudaLlm) {
      if (const TrajectoryEntry* last = latest_evaluated(state))
        trajectory = "\n## Latest attempt\n" + attempt_text(*last, false);
    } else {  // effilearner: refine the current version from its execution profile
      const TrajectoryEntry* current = best_entry ? best_entry : latest_evaluated(state);
      if (current)
        best = "\n## Current version and its execution profile\n" + fenced(context_.language, current->evaluation.code) +
               render_feedback(current->evaluation, 1500);
    }
    return render_template(prompts_.propose, {{"function", context_.target.function},
                                              {"file", context_.target.file},
                                              {"language", context_.language},
                                              {"original", context_.original},
                                              {"context", context_.context},
                                              {"best", best},
                                              {"trajectory", trajectory},
                                              {"instruction", instruction(state)},
                                              {"unit", unit_names()},
                                              {"rules", rules()}});
  }

  std::string unit_names() const {
    std::string names;
    for (const std::string& n : context_.target.unit) names += (names.empty() ? "" : ", ") + n;
    return names.empty() ? context_.target.function : names;
  }

  // What the block may hold besides the target: for a unit of one, helpers before it; for
  // a larger unit, also its other functions, redefined in place.
  std::string rules() const {
    const Target& t = context_.target;
    if (t.unit.size() <= 1)
      return "Helper functions, types, constants or #include lines it needs may come before it in the same "
             "block. Change nothing else.";
    std::string others;
    for (std::size_t i = 1; i < t.unit.size(); ++i) others += (others.empty() ? "`" : ", `") + t.unit[i] + "`";
    std::string text =
        "`" + t.function + "` and the functions it calls in this file form one unit, shown above as the "
        "original: " + others + ". The block may also hold a new definition of any of them that you change, "
        "under the same name and signature: each replaces the original where it stands in the file, so "
        "rewrite a kernel or helper itself (and change launch configurations as you need) rather than "
        "copying it under a new name; leave out the ones you keep. New helper functions, types, constants "
        "or #include lines may come first in the block; they are placed before the first function of the "
        "unit you redefine, so give them names the file does not use. Do not define any other function of "
        "the file, and change nothing else.";
    for (const std::string& note : t.unit_notes) text += " Note: " + note + ".";
    return text;
  }

  SearchPolicy preset_;
  std::string name_;  // its name: the candidates' ids and origin
  TargetContext context_;
  llm::Provider& provider_;
  const Prompts prompts_;  // a copy: a few strings, and no lifetime to get wrong
  Spend& spend_;
  int window_;
  int counter_ = 0;
};

}  // namespace

std::unique_ptr<Policy> make_llm_policy(SearchPolicy preset, const TargetContext& context, llm::Provider& provider,
                                        const Prompts& prompts, Spend& spend, int trajectory_window) {
  if (!is_llm_policy(preset)) throw PolicyError("not an LLM policy: '" + search_policy_name(preset) + "'");
  return std::make_unique<LlmPolicy>(preset, context, provider, prompts, spend, trajectory_window);
}

}  // namespace maxcode
