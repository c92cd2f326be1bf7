#include "runner/util/format.h"
#include "runner/search/critic.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "runner/search/feedback.h"
#include "runner/search/spend.h"

namespace maxcode {

namespace {

// The first line of `text` that contains `needle` (compiler "error:", test "FAIL").
std::string first_line_with(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos) return line.substr(0, 300);
  return "";
}

std::string last_lines(const std::string& text, int count) {
  std::size_t pos = text.size();
  for (int i = 0; i <= count && pos != std::string::npos && pos > 0; ++i) pos = text.rfind('\n', pos - 1);
  return text.substr(pos == std::string::npos ? 0 : pos + 1, 600);
}

std::string names_of(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// What a candidate may change, for the critique of a rejected one.
std::string unit_rules(const Target& target) {
  std::string rules;
  if (target.unit.size() <= 1) {
    rules = "Only the function " + target.function +
            " itself may change, with new helpers placed right before or after it in the same file.";
  } else {
    std::vector<std::string> others(target.unit.begin() + 1, target.unit.end());
    rules = "The unit of " + target.function + " is " + names_of(target.unit) + ": any of them may be "
            "redefined in place, under its own name (each new definition replaces the original where it "
            "stands, so rewrite a kernel itself rather than copying it under a new name), and launch "
            "configurations may change; new helpers, types and constants may be added beside them. "
            "Other functions of the file may not be redefined.";
  }
  if (!target.unit_notes.empty()) {
    rules += " Not in the unit:";
    for (const std::string& note : target.unit_notes) rules += " " + note + ".";
  }
  return rules;
}

class MetricsCritic : public Critic {
 public:
  explicit MetricsCritic(TargetContext context) : context_(std::move(context)) {}
  std::string name() const override { return "metrics"; }

  std::string critique(const Evaluation& e) override {
    switch (e.verdict) {
      case Verdict::kCompileError: {
        std::string first = first_line_with(e.compiler_output, "error");
        if (first.empty()) first = last_lines(e.compiler_output, 3);
        if (is_redefinition(e.compiler_output)) return "It does not compile: " + first + ". " + redefinition_fix();
        return "It does not compile: " + first +
               ". Fix this error first: keep the signature of " + context_.target.function +
               ", declare every helper before its use, and use only headers the file can include.";
      }
      case Verdict::kTestFailed: {
        std::string first = first_line_with(e.test_output, "FAIL");
        if (first.empty()) first = last_lines(e.test_output, 3);
        return "The project's tests fail (" + first +
               "): the new logic differs from the original on the tests' inputs. Check the edge "
               "cases — empty input, lengths that are not a multiple of the unroll or vector width, "
               "negative or extreme values — and the remainder loop.";
      }
      case Verdict::kIncorrect:
        return "It computes different results from the original: " + e.mismatch +
               " Typical causes: a dropped tail or remainder loop, overflow in a narrower type, "
               "reordered floating-point sums beyond the tolerance, or reading uninitialized memory.";
      case Verdict::kTimeout:
        return "It ran past the time limit (" + e.reason +
               "): an endless loop, a deadlock, or far more work than the original. Check loop "
               "bounds and termination conditions.";
      case Verdict::kLimit:
        return "It was stopped at a limit on what one run may take (" + e.reason +
               "): far more memory, processes or CPU time than the original needs. Look for "
               "allocations inside loops or per call, buffers sized from the wrong count, "
               "copies of the input that are never freed, and threads or processes started per call.";
      case Verdict::kCrashed:
        return "It crashes or misbehaves at run time (" + e.reason +
               "): look for out-of-bounds accesses, misaligned vector loads, stack overflows from "
               "large local arrays, or unchecked sizes.";
      case Verdict::kRejected:
        if (e.reason.rfind("compute-sanitizer", 0) == 0)
          return "It is fast, but " + e.reason + ". Shared-memory writes need a __syncthreads() before other "
                 "threads read them, every global access needs a bounds check for partial tiles, and no "
                 "thread may return before a barrier the others still reach.";
        if (e.reason.rfind("benchmark '", 0) == 0)
          return "Its time cannot be trusted and it was rejected: " + e.reason +
                 ". Do the work in kernels launched by the function itself, on the caller's stream, "
                 "without extra host-device copies.";
        return "It was rejected before running: " + e.reason + ". " + unit_rules(context_.target);
      case Verdict::kUnverifiable:
        return "It was timed faster, but no claim can rest on this benchmark: " + e.reason +
               ". The time may come from a result kept between calls; keep the computation whole on every call.";
      case Verdict::kNotFaster:
        return not_faster(e) + gpu_notes(e);
      case Verdict::kFaster:
        return faster(e) + gpu_notes(e);
    }
    return "";
  }

  // gcc/clang "redefinition of", nvcc "has already been defined", both "previously
  // defined here": the file already defines a function the code defines again.
  static bool is_redefinition(const std::string& output) {
    return output.find("redefinition of") != std::string::npos ||
           output.find("has already been defined") != std::string::npos ||
           output.find("previously defined here") != std::string::npos;
  }

  std::string redefinition_fix() const {
    const Target& t = context_.target;
    std::string names = names_of(t.unit);
    if (names.empty()) names = t.function;
    return "A function is defined twice: the code defines one the file already has. To change a "
           "function of the unit (" + names + "), give its complete new definition under the same name "
           "and signature: it replaces the original where it stands, so never copy it next to itself. A "
           "function outside the unit may not be redefined: give your own helper a new name that the file "
           "does not use (or add the function to targets.unit.add in .maxcode.json).";
  }

  // What ptxas and the timing say about the kernels: spills, registers, roofline.
  static std::string gpu_notes(const Evaluation& e) {
    std::string notes;
    for (const auto& k : e.gpu.value("resources", nlohmann::json::array())) {
      const long spilled = k.value("spill_store_bytes", 0L) + k.value("spill_load_bytes", 0L);
      const std::string name = k.value("demangled", k.value("kernel", std::string()));
      if (spilled > 0)
        notes += " ptxas: " + name + " spills " + std::to_string(spilled) +
                 " bytes to local memory; use fewer live values or smaller per-thread arrays.";
      else if (k.value("registers", 0) > 128)
        notes += " ptxas: " + name + " uses " + std::to_string(k.value("registers", 0)) +
                 " registers per thread, which limits occupancy.";
    }
    if (e.timing && e.timing->roofline_floor_s > 0) {
      const double pct = 100 * e.timing->roofline_floor_s / e.timing->candidate_median_s;
      notes += " It runs at " + fixed(pct, 0) + "% of the roofline" +
               (pct > 80 ? ": little is left to gain." : ": the kernels are far from the hardware limit.");
    }
    return notes;
  }

 private:
  std::string not_faster(const Evaluation& e) const {
    if (!e.timing) return "Not measured as faster: " + e.reason;
    const auto& s = e.timing->speedup;
    if (s.high < 1.0)
      return "It is slower than the original (" + fixed(s.median) + "x, interval " + fixed(s.low) + "-" +
             fixed(s.high) + "): the change adds work or worsens memory access. Go back to the best "
             "version so far and try a different idea.";
    return "No significant gain (" + fixed(s.median) + "x, interval " + fixed(s.low) + "-" + fixed(s.high) +
           "): the change does not touch what limits the speed. Find the bottleneck first: for CPU "
           "code, dependency chains between iterations, memory access order and cache misses, "
           "branches in the inner loop, and whether the compiler can vectorize it; for GPU code, "
           "memory coalescing, occupancy and launch configuration.";
  }

  std::string faster(const Evaluation& e) const {
    const auto& t = *e.timing;
    return "Faster: " + fixed(t.speedup.median) + "x (interval " + fixed(t.speedup.low) + "-" +
           fixed(t.speedup.high) + "), " + fixed(t.candidate_median_s, 4) + " s against " +
           fixed(t.baseline_median_s, 4) + " s. Keep what made it faster and push the same idea "
           "further (wider independent accumulators, larger blocking or tiles, fewer passes over "
           "memory), then check whether the remaining time is spent on memory traffic or on "
           "arithmetic to choose the next step.";
  }

  TargetContext context_;
};

class LlmCritic : public Critic {
 public:
  LlmCritic(TargetContext context, llm::Provider& provider, const Prompts& prompts, Spend* spend)
      : context_(std::move(context)), provider_(provider), prompts_(prompts), spend_(spend), fallback_(context_) {}
  std::string name() const override { return "llm " + provider_.describe(); }

  std::string critique(const Evaluation& e) override {
    llm::Request request;
    request.purpose = "critique";
    request.messages = {
        {"system", prompts_.system},
        {"user", render_template(prompts_.critique, {{"function", context_.target.function},
                                                     {"file", context_.target.file},
                                                     {"language", context_.language},
                                                     {"original", context_.original},
                                                     {"attempt", e.code.empty() ? "(no code)" : e.code},
                                                     {"evaluation", render_feedback(e)}})}};
    try {
      std::optional<llm::Reply> answered = spend_ ? spend_->complete(provider_, request) : provider_.complete(request);
      if (!answered)
        return fallback_.critique(e) + " (The LLM critic was not asked: " + spend_->exhausted() + "; rule-based critique.)";
      const llm::Reply& reply = *answered;
      std::string text = reply.text.substr(0, 3000);
      if (!text.empty()) return text;
      return fallback_.critique(e) + " (The LLM critic returned nothing; rule-based critique.)";
    } catch (const llm::LlmError& error) {
      if (error.stops_run()) throw;
      return fallback_.critique(e) + " (The LLM critic failed: " + error.what() + "; rule-based critique.)";
    }
  }

 private:
  TargetContext context_;
  llm::Provider& provider_;
  const Prompts prompts_;  // a copy: a few strings, and no lifetime to get wrong
  Spend* spend_;
  MetricsCritic fallback_;
};

}  // namespace

namespace {

constexpr std::size_t kMaxContext = 8000;

std::string language_of(const std::string& file) {
  const std::string ext = std::filesystem::path(file).extension().string();
  return ext == ".cu" || ext == ".cuh" ? "cuda" : "cpp";
}

std::string capped(std::string context) {
  if (context.size() > kMaxContext) context = context.substr(0, kMaxContext) + "\n/* ... file continues ... */";
  return context;
}

}  // namespace

TargetContext make_target_context(const Target& target, const std::string& file_text,
                                  const std::string& original_definition) {
  TargetContext c;
  c.target = target;
  c.language = language_of(target.file);
  c.original = original_definition;
  std::string context = file_text;
  const std::size_t at = context.find(original_definition);
  if (at != std::string::npos)
    context.replace(at, original_definition.size(), "/* ... " + target.function + " (shown above) ... */");
  c.context = capped(context);
  return c;
}

TargetContext make_target_context(const Target& target, const std::string& file_text, const Unit& unit) {
  TargetContext c;
  c.target = target;
  if (c.target.unit.empty()) c.target.unit = unit.names();
  c.language = language_of(target.file);
  c.original = unit_text(file_text, unit);
  std::vector<const UnitFunction*> functions;
  for (const UnitFunction& f : unit.functions) functions.push_back(&f);
  std::sort(functions.begin(), functions.end(),
            [](const UnitFunction* a, const UnitFunction* b) { return a->extent.begin > b->extent.begin; });
  std::string context = file_text;
  for (const UnitFunction* f : functions)  // from the bottom up, so offsets stay valid
    context.replace(f->extent.begin, f->extent.end - f->extent.begin, "/* ... " + f->name + " (shown above) ... */");
  c.context = capped(context);
  return c;
}

std::unique_ptr<Critic> make_metrics_critic(const TargetContext& context) {
  return std::make_unique<MetricsCritic>(context);
}

std::unique_ptr<Critic> make_llm_critic(const TargetContext& context, llm::Provider& provider,
                                        const Prompts& prompts, Spend* spend) {
  return std::make_unique<LlmCritic>(context, provider, prompts, spend);
}

}  // namespace maxcode
