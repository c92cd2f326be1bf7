#include "bot/delivery/pr_body.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <vector>

#include "bot/delivery/pr_metadata.h"
#include "bot/delivery/sanitize.h"
#include "runner/util/format.h"
#include "runner/util/json_io.h"
#include "runner/util/process.h"
#include "runner/util/secrets.h"

namespace maxcode::bot {

namespace {

using nlohmann::json;

std::string ratio(double r) { return fixed(r, 2) + "x"; }

// A code span that is also safe in a table cell.
std::string cell_code(const std::string& text, std::size_t limit = 80) {
  std::string span = code_span(std::string(utf8_prefix(text, limit)) + (text.size() > limit ? "…" : ""));
  std::string out;
  for (char c : span) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

// "1.75x [1.70, 1.80]": a speedup and its 95% interval.
std::string interval_text(const RatioInterval& s) {
  return ratio(s.median) + " [" + fixed(s.low, 2) + ", " + fixed(s.high, 2) + "]";
}

std::string speedup_cell(const Evaluation& candidate) {
  return candidate.timing ? interval_text(candidate.timing->speedup) : "—";
}

// ---- sections --------------------------------------------------------------------

std::string header(const DeliveryInput& in) {
  const double s = in.winner().confirmed.speedup.median;
  std::string out = "maxcode found a faster version of " + cell_code(in.function()) + " in " + cell_code(in.git_path()) +
                    " and measured it: **" + ratio(s) + " faster** (" + time_change(s) +
                    " time), confirmed in a fresh A/B session against the original.\n\n";
  // The unit (result.json target.unit): the function and what it calls in its file,
  // a kernel rewritten in place included.
  const std::vector<std::string>& unit = in.result.target.unit;
  if (unit.size() > 1) {
    std::string names;
    for (std::size_t i = 0; i < unit.size() && i < 12; ++i) names += (i ? ", " : "") + cell_code(unit[i], 80);
    if (unit.size() > 12) names += ", …";
    out += "Only the functions of its unit changed (" + names +
           ": the function and what it calls in the same file), plus helpers next to them; a candidate touching "
           "anything else would have been rejected before building.\n";
  } else {
    out += "Only the body of this function changed (plus helpers next to it); a candidate touching anything else would "
           "have been rejected before building.\n";
  }
  return out;
}

// A Google Benchmark program (result.json winner.confirmation.entries): the round's
// figure is the sum of its entries' times per iteration; each entry shows which moved.
std::string entries(const Timing& confirmation) {
  const std::vector<Timing::Entry>& list = confirmation.entries;
  if (list.empty()) return "";
  constexpr std::size_t kShown = 20;
  std::string out = "\nThe benchmark entries timed (Google Benchmark, median time per iteration over the rounds):\n\n"
                    "| entry | original | this PR | speedup |\n|---|---:|---:|---:|\n";
  for (std::size_t i = 0; i < list.size() && i < kShown; ++i) {
    const Timing::Entry& e = list[i];
    const double a = e.baseline_median_s, b = e.candidate_median_s;
    out += "| " + cell_code(e.benchmark + ": " + e.name, 120) + " | " + format_duration(a) + " | " +
           format_duration(b) + " | " + (b > 0 ? ratio(a / b) : std::string("—")) + " |\n";
  }
  if (list.size() > kShown) out += "\n" + std::to_string(list.size() - kShown) + " more in result.json.\n";
  return out;
}

std::string results(const DeliveryInput& in) {
  const ResultWinner& w = in.winner();
  const Timing& confirmation = w.confirmed;
  const RatioInterval& sp = confirmation.speedup;
  const double s = sp.median;
  std::string out = "### Results\n\n";
  out += "| | median time per round |\n|---|---:|\n";
  out += "| original | " + format_duration(confirmation.baseline_median_s) + " |\n";
  out += "| this PR | " + format_duration(confirmation.candidate_median_s) + " |\n\n";
  out += "| speedup | 95% interval | rounds | accepted when |\n|---|---|---:|---|\n";
  out += "| **" + ratio(s) + "** (" + time_change(s) + " time) | " + ratio(sp.low) + " – " + ratio(sp.high) + " | " +
         std::to_string(sp.rounds) + " | lower bound > " + fixed(confirmation.min_speedup, 2) + "x (minimum) and > " +
         fixed(confirmation.noise_floor, 3) + "x (A/A noise floor) |\n\n";
  // The headline is the median of per-round ratios, not the ratio of the medians above;
  // where the two differ at the shown precision the body says so, so the table and the
  // headline never seem to disagree.
  const double of_medians = confirmation.baseline_median_s / std::max(confirmation.candidate_median_s, 1e-300);
  out += "Speedup = the median of the per-round ratios (the original's time / this PR's time, both timed in each "
         "interleaved A/B round, in random order after warm-up); the 95% interval is the wider of a sign-test "
         "(order-statistic) interval and a block bootstrap of those ratios. A round times all benchmarks once";
  const std::string& stop = confirmation.stop_reason;
  out += stop.empty() ? ".\n" : " (rounds stopped: " + sanitize_inline(stop, 60) + ").\n";
  if (confirmation.candidate_median_s > 0 && ratio(of_medians) != ratio(s))
    out += "The two median times above give " + ratio(of_medians) + "; the speedup pairs each round's two times, "
           "so a change of load between rounds moves it less.\n";
  // What the claim rests on besides the in-process timer (GPU winners).
  if (w.witness)
    out +=
        "Out-of-process check (Nsight Compute, run by maxcode): " + sanitize_inline(describe(*w.witness), 400) + ".\n";
  if (w.search_speedup)
    out += "During the search the same candidate measured " + interval_text(*w.search_speedup) + ".\n";
  if (const std::string note = confirmation.contention_note(); !note.empty()) out += note + "\n";
  out += entries(confirmation);
  return out;
}

// The winner's largest error against the original, per output (result.json
// winner.precision), with reduced precision called out.
std::string precision(const std::vector<OutputError>& errors) {
  if (errors.empty()) return "";
  std::string out = "\n**Precision against the original** (largest error per output):\n\n"
                    "| output | type | values | max relative error | max ulp |\n|---|---|---|---|---|\n";
  std::string flags;
  for (const OutputError& p : errors) {
    char rel[32];
    std::snprintf(rel, sizeof rel, "%.2g", p.max_relative);
    out += "| " + cell_code(p.output, 60) + " | " + sanitize_inline(p.type, 30) + " | " + std::to_string(p.values) +
           " | " + rel + " | " + (p.type == "text" ? "—" : fixed(p.max_ulp, 0)) + " |\n";
    if (p.loose) flags += "\n**Reduced precision:** " + sanitize_inline(p.note, 300) + ".\n";
  }
  return out + flags + "\n";
}

// The benchmark audit (result.json audit): what the project's benchmark can and cannot
// catch, and what maxcode checked on its own.
std::string audit(const std::vector<BenchmarkAudit>& audits) {
  if (audits.empty()) return "";
  std::string out = "\n**Benchmark audit:**\n\n";
  for (const BenchmarkAudit& a : audits) {
    out += "- " + cell_code(a.benchmark) + " (" + std::to_string(a.calls) + " call(s) per run):\n";
    for (const std::string& finding : a.findings) out += "  - " + sanitize_inline(finding, 300) + "\n";
    out += "  - maxcode's own check: " + sanitize_inline(a.call_check, 300) + "\n";
  }
  return out + "\n";
}

// What the winner's own run went through (result.json candidates[].steps): the build,
// the tests, each benchmark's output per seed, the sanitizers, the isolation.
std::string winner_checks(const DeliveryInput& in) {
  const Evaluation* winner = in.winner_candidate();
  std::string out;
  std::map<std::string, std::vector<std::string>> checks;  // benchmark -> seeds
  std::vector<std::string> sanitizers;
  const std::vector<StepRecord> no_steps;
  for (const StepRecord& step : winner ? winner->steps : no_steps) {
    const std::string& name = step.name;
    if (name.rfind("check ", 0) == 0) {
      const std::size_t at = name.find(" seed=");
      checks[name.substr(6, at == std::string::npos ? std::string::npos : at - 6)].push_back(
          at == std::string::npos ? "" : name.substr(at + 6));
    } else if (name.find("sanitizer") != std::string::npos || name.find("memcheck") != std::string::npos ||
               name.find("racecheck") != std::string::npos) {
      sanitizers.push_back(cell_code(name) + ": " + sanitize_inline(step.status, 80));
    } else if (name == "test") {
      out += "- The project's tests passed with this change: " + cell_code(step.command, 160) + " (" +
             sanitize_inline(step.status, 60) + ").\n";
    } else if (name == "build") {
      out += "- It builds: " + cell_code(step.command, 160) + ".\n";
    }
  }
  for (const auto& [bench, bench_seeds] : checks) {
    std::string list;
    for (const auto& s : bench_seeds) list += (list.empty() ? "" : ", ") + sanitize_inline(s, 30);
    out += "- The output of benchmark " + cell_code(bench) + " matched the original's for " +
           std::to_string(bench_seeds.size()) + " seed(s) (`MAXCODE_SEED` = " + list +
           "): exact for integers and text, within the configured relative tolerance for floating point.\n";
  }
  if (checks.empty() && in.result.settings.contains("seeds"))
    out += "- Seeds configured: " + sanitize_inline(dump_json(in.result.settings["seeds"]), 100) + ".\n";
  if (!sanitizers.empty()) {
    for (const auto& s : sanitizers) out += "- Sanitizer " + s + ".\n";
  } else {
    const bool gpu = in.result.environment.contains("gpu");
    out +=
        gpu ? "- compute-sanitizer: not run for this result.\n" : "- compute-sanitizer: not applicable (CPU code).\n";
  }
  if (winner && !winner->isolation.empty())
    out += "- Candidate code ran isolated with " + sanitize_inline(winner->isolation, 40) + ".\n";
  return out;
}

// The candidates that failed show that the checks bite: their verdicts, and the first
// few rejections with their reasons.
std::string other_candidates(const DeliveryInput& in) {
  std::map<std::string, int> verdicts;
  std::vector<std::string> rejected;
  for (const ResultCandidate& entry : in.result.candidates) {
    const Evaluation& c = entry.evaluation;
    if (c.candidate_id == in.winner().id) continue;
    const std::string verdict = verdict_name(c.verdict);
    ++verdicts[verdict];
    if (c.verdict != Verdict::kFaster && c.verdict != Verdict::kNotFaster && rejected.size() < 5)
      rejected.push_back(cell_code(c.candidate_id, 60) + " — " + sanitize_inline(verdict, 30) + ": " +
                         sanitize_inline(c.reason, 160));
  }
  if (verdicts.empty()) return "";
  std::string summary;
  for (const auto& [v, n] : verdicts)
    summary += (summary.empty() ? "" : ", ") + std::to_string(n) + " " + sanitize_inline(v, 30);
  std::string out = "- The other candidates of this search: " + summary + ".\n";
  for (const auto& r : rejected) out += "  - " + r + "\n";
  return out;
}

std::string correctness(const DeliveryInput& in) {
  std::string out = "### Correctness\n\n" + winner_checks(in) + other_candidates(in);
  const ResultWinner& w = in.winner();
  if (!w.call_check.empty())
    out +=
        "- Call check (maxcode's wrapper around the function, in every run that was timed: inputs perturbed, "
        "every call's outputs compared with the original's): " +
        sanitize_inline(w.call_check, 400) + ".\n";
  out += precision(w.precision);
  out += audit(in.result.audit);
  for (const std::string& warning : in.result.warnings) out += "- Warning: " + sanitize_inline(warning, 300) + "\n";
  return out;
}

// Who wrote a critique: result.json's `critic` is "llm <model>" or "metrics" (maxcode's
// rule-based critic); without it the text is treated as model-written, the cautious label.
std::string critic_label(const Evaluation& candidate) {
  const std::string& critic = candidate.critic;
  if (critic == "metrics") return "";
  if (critic.rfind("llm", 0) == 0 && critic.size() > 4) return " (" + sanitize_inline(critic.substr(4), 60) + ")";
  return "";
}

std::string rationale(const DeliveryInput& in, std::size_t max_bytes) {
  const Evaluation* winner = in.winner_candidate();
  if (!winner || winner->critique.empty()) return "";
  const std::string& critique = winner->critique;
  std::string text(utf8_prefix(critique, max_bytes));
  const bool cut = text.size() < critique.size();
  const bool rules = winner->critic == "metrics";
  std::string out;
  if (rules) {
    out = "### Why it is faster (rule-based diagnosis)\n\n> [!NOTE]\n> Written by maxcode's rule-based critic from the "
          "measured metrics, not by a person. The numbers above are measured.\n\n";
  } else {
    out = "### Why it is faster (model-written)\n\n> [!NOTE]\n> This rationale was written by a language model" +
          critic_label(*winner) +
          " from the measurements. It explains; it does not prove. The numbers above are measured.\n\n";
  }
  out += sanitize_markdown(text);
  if (!out.empty() && out.back() != '\n') out += "\n";
  if (cut) out += "\n*(rationale shortened to fit the PR body)*\n";
  return out;
}

std::string environment(const DeliveryInput& in) {
  const json& env = in.result.environment;
  if (env.empty()) return "";
  static const std::vector<std::string> order = {"gpu", "driver", "cuda", "nvcc", "compiler", "cpu", "cores",
                                                 "os", "isolation", "runner", "maxcode", "time"};
  std::string out = "### Environment\n\n| | |\n|---|---|\n";
  auto row = [&](const std::string& key, const json& value) {
    out += "| " + sanitize_inline(key, 40) + " | " +
           sanitize_inline(value.is_string() ? value.get<std::string>() : dump_json(value), 200) + " |\n";
  };
  for (const auto& key : order)
    if (env.contains(key)) row(key, env[key]);
  for (const auto& [key, value] : env.items())
    if (std::find(order.begin(), order.end(), key) == order.end()) row(key, value);
  return out;
}

std::string reproduce(const DeliveryInput& in, const PrContext& ctx) {
  const std::string base = ctx.base_commit.empty() ? "<base>" : ctx.base_commit.substr(0, 12);
  const std::string git_path = in.git_path();
  std::string dir = ".";
  if (git_path.size() > in.file().size()) dir = git_path.substr(0, git_path.size() - in.file().size() - 1);
  // A reader pastes these lines: quotes only where the shell needs them.
  auto word = [](const std::string& text) { return shell_quote(text, Quote::when_needed); };
  std::string script = "git fetch origin " + word(ctx.branch) + "\n";
  script += "git checkout --detach " + base + "\n";
  script += "git diff " + base + " FETCH_HEAD > maxcode.diff\n";
  script += "maxcode eval " + word(dir) + " --function " + word(in.function()) +
            " --candidate maxcode.diff\n";
  return "### Reproduce\n\nRe-measure this change against the original on your machine (same checks, fresh A/B "
         "session):\n\n" +
         code_block(script, "sh");
}

std::string trajectory(const DeliveryInput& in, std::size_t max_rows, bool evidence) {
  if (in.trajectory.empty()) return "";
  std::string out = "<details><summary>Search trajectory (" + std::to_string(in.trajectory.size()) +
                    " candidates)</summary>\n\n| # | candidate | verdict | speedup [95% CI] | reason |\n|---:|---|---|---|---|\n";
  std::size_t n = 0;
  for (const auto& c : in.trajectory) {
    if (n == max_rows) {
      out += "| | … " + std::to_string(in.trajectory.size() - n) + " more | | | |\n";
      break;
    }
    ++n;
    out += "| " + std::to_string(n) + " | " + cell_code(c.candidate_id, 60) + " | " +
           sanitize_inline(verdict_name(c.verdict), 30) + " | " + speedup_cell(c) + " | " +
           sanitize_inline(c.reason, 160) + " |\n";
  }
  out += "\n";
  if (evidence) {
    n = 0;
    for (const auto& c : in.trajectory) {
      if (++n > max_rows) break;
      std::string proof = c.compiler_output;
      if (proof.empty()) proof = c.test_output;
      if (proof.empty()) proof = c.mismatch;
      const std::string& critique = c.critique;
      if (proof.empty() && critique.empty()) continue;
      out += "**" + std::to_string(n) + ". " + cell_code(c.candidate_id, 60) + "**\n\n";
      if (!proof.empty()) {
        const std::string tail = proof.size() > 1500 ? "…" + proof.substr(proof.size() - 1500) : proof;
        out += code_block(tail);
      }
      if (!critique.empty())
        out += std::string("\nCritique (") + (c.critic == "metrics" ? "rule-based" : "model-written") +
               "): " + sanitize_inline(critique, 600) + "\n";
      out += "\n";
    }
  }
  return out + "</details>\n";
}

std::string footer(const DeliveryInput& in, const std::vector<std::string>& trimmed, int superseded) {
  std::string out = "---\n";
  if (superseded > 0)
    out += "An earlier PR for this function (#" + std::to_string(superseded) +
           ") was closed; the function has changed since, so maxcode looked at it again.\n\n";
  if (!trimmed.empty()) {
    std::string list;
    for (const auto& t : trimmed) list += (list.empty() ? "" : ", ") + t;
    out += "*Shortened to fit GitHub's 65,536-character limit: " + list +
           ". The full record is in the run's report.md and trajectory.jsonl.*\n\n";
  }
  out += "<sub>Opened by maxcode " + sanitize_inline(in.result.environment_text("maxcode"), 20) + " · run `" +
         in.run_id() +
         "` · A re-run updates this PR. Closing it without merging tells maxcode to leave this function alone until "
         "its code changes.</sub>\n";
  return out;
}

json metadata(const DeliveryInput& in, const PrContext& ctx) {
  const RatioInterval& speedup = in.winner().confirmed.speedup;
  return {{"version", 1},
          {"run", in.run_id()},
          {"target", {{"file", in.git_path()}, {"function", in.function()}, {"signature", in.result.target.signature}}},
          {"target_hash", ctx.target_hash},
          {"base_commit", ctx.base_commit},
          {"branch", ctx.branch},
          {"speedup", speedup.median},
          {"interval", {speedup.low, speedup.high}},
          {"rounds", static_cast<long long>(speedup.rounds)},
          {"maxcode", in.result.environment_text("maxcode")}};
}

// A section and its renditions from full to absent; trimming steps down one at a time,
// lowest `keep` first.
struct Section {
  std::string name;
  int keep;  // how much the section matters: trimmed in increasing order
  std::vector<std::string> renditions;
  std::size_t level = 0;
  const std::string& text() const { return renditions[level]; }
};

}  // namespace

std::string time_change(double speedup) {
  if (speedup <= 0) return "n/a";
  const double pct = (1.0 / speedup - 1.0) * 100.0;
  const std::string value = std::fabs(pct) < 1 ? fixed(pct, 1) : fixed(std::round(pct), 0);
  return (pct > 0 ? "+" : "") + value + "%";
}

std::string pr_title(const DeliveryInput& in) {
  const double s = in.winner().confirmed.speedup.median;
  // The name comes from the repository: no mentions, no references, short.
  return "perf: speed up " + sanitize_plain(in.function(), 120) + " " + ratio(s) + " (" + time_change(s) + " time)";
}

PrText compose_pr(const DeliveryInput& in, const PrContext& ctx, std::size_t limit) {
  PrText out;
  // No secret this process holds reaches a PR, whatever the result files carry.
  out.title = redact_secrets(pr_title(in));
  out.metadata = metadata(in, ctx);

  // In reading order; `keep` orders the trimming (trajectory first, correctness last).
  std::vector<Section> sections;
  const std::size_t rows = in.trajectory.size();
  sections.push_back({"summary", 99, {header(in)}});
  sections.push_back({"results", 99, {results(in)}});
  sections.push_back({"correctness evidence", 5, {correctness(in), ""}});
  sections.push_back({"rationale", 2, {rationale(in, 20000), rationale(in, 2000), ""}});
  sections.push_back({"environment", 3, {environment(in), ""}});
  sections.push_back({"reproduce", 4, {reproduce(in, ctx), ""}});
  sections.push_back({"trajectory", 1, {trajectory(in, rows, true), trajectory(in, rows, false),
                                        trajectory(in, std::min<std::size_t>(rows, 20), false), ""}});

  const std::string metadata_line = render_metadata(out.metadata);
  auto render = [&](const std::vector<std::string>& trimmed) {
    std::string body;
    for (const auto& s : sections)
      if (!s.text().empty()) body += s.text() + "\n";
    return redact_secrets(body + footer(in, trimmed, ctx.superseded_pr) + "\n" + metadata_line + "\n");
  };
  std::string body = render({});
  std::vector<Section*> by_keep;
  for (auto& s : sections) by_keep.push_back(&s);
  std::stable_sort(by_keep.begin(), by_keep.end(), [](const Section* a, const Section* b) { return a->keep < b->keep; });
  for (Section* section : by_keep) {
    if (body.size() <= limit) break;
    Section& s = *section;
    while (s.level + 1 < s.renditions.size() && body.size() > limit) {
      ++s.level;
      if (std::find(out.trimmed.begin(), out.trimmed.end(), s.name) == out.trimmed.end()) out.trimmed.push_back(s.name);
      body = render(out.trimmed);
    }
  }
  if (body.size() > limit) {
    // Only the essential sections are left and they are still too long (a pathological
    // input): cut the text, keep the metadata.
    const std::string tail = "\n\n*(cut to fit GitHub's limit)*\n\n" + metadata_line + "\n";
    body = std::string(utf8_prefix(body, limit - tail.size())) + tail;
    out.trimmed.push_back("everything past this point");
  }
  out.body = body;
  return out;
}

}  // namespace maxcode::bot
