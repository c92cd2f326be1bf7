// `maxcode check-input --kind KIND FILE` (hidden): reads one input the way a run reads
// it and checks it, running nothing: no clone, no build, no search. It is what
// scripts/fuzz-inputs.sh feeds hostile inputs to, and a quick way to check a file by
// hand. Prints "ok: ..." and exits 0 when the input is accepted, prints the error
// (naming the file and the field) and exits 1 when it is not; a crash or a hang is a
// bug.
//
//   config   a project file (.maxcode.json), its llm section included
//   job      a job's input document (maxcode run --job)
//   sweep    a sweep document (maxcode sweep)
//   replay   a replay candidate (a definition or a diff): put into a small target file,
//            checked by the scope rule and the knob scanner, then carried through an
//            evaluation record, a checkpoint and back, as a search does with it
//   reply    a model's reply: its code block (then as `replay`) and a reranker estimate
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>

#include "cli/subcommand.h"
#include "runner/core/config.h"
#include "runner/job/job_input.h"
#include "runner/job/sweep.h"
#include "runner/llm/provider.h"
#include "runner/search/checkpoint.h"
#include "runner/search/policy.h"
#include "runner/search/reply.h"
#include "runner/search/reranker.h"
#include "runner/util/files.h"
#include "runner/util/json_io.h"
#include "runner/workspace/clone.h"
#include "runner/workspace/knobs.h"
#include "runner/workspace/patch.h"
#include "runner/workspace/scope.h"
#include "runner/workspace/source_extent.h"

namespace maxcode::cli {
namespace {

namespace fs = std::filesystem;

// The file a replayed candidate or a reply's code goes into: a target with a knob
// beside it, so the scope rule and the knob scanner both see the candidate's text.
constexpr const char* kTargetFile = "src/target.cc";
constexpr const char* kOriginal =
    "#include <cstddef>\n"
    "\n"
    "#define LANES 4  // maxcode: tune LANES 1 2 4 8\n"
    "\n"
    "static int helper(int x) { return x * LANES; }\n"
    "\n"
    "int target(const int* a, std::size_t n) {\n"
    "  int s = 0;\n"
    "  for (std::size_t i = 0; i < n; ++i) s += helper(a[i]);\n"
    "  return s;\n"
    "}\n"
    "\n"
    "int main() { return 0; }\n";

// What the search does with a candidate before and after it is evaluated, minus the
// build and the runs: its text in the target file, the scope rule, the knobs, then the
// evaluation record through a checkpoint and back.
std::string carry_candidate(const Candidate& candidate) {
  std::string scope = candidate.error ? "rejected: " + *candidate.error : "no definition";
  std::string text;
  if (candidate.definition) {
    const std::string original = kOriginal;
    const Extent extent = find_definition(original, "target", kTargetFile);
    text = replace_definition(original, extent, *candidate.definition);
    const ScopeVerdict verdict =
        check_target_file(original, text, extent, "target", kTargetFile, {KnobLine{"LANES", {"1", "2", "4", "8"}}});
    scope = verdict.ok ? "in scope" : "out of scope: " + verdict.reason;
    try {
      find_declared_knobs(text, kTargetFile);
    } catch (const KnobError& e) {
      scope += "; knobs: " + std::string(e.what());
    }
  } else if (candidate.diff) {
    text = *candidate.diff;
    try {
      scope = std::to_string(files_in_diff(text).size()) + " file(s) in the diff";
    } catch (const std::exception& e) {
      scope = std::string("not a diff: ") + e.what();
    }
  }

  // The candidate's text comes back in every field that quotes a step's output (as
  // tails: the evaluator keeps the last part of an output).
  const std::string tail = text.substr(text.size() - std::min<std::size_t>(text.size(), 64 << 10));
  Evaluation evaluation;
  evaluation.candidate_id = candidate.id;
  evaluation.verdict = candidate.error ? Verdict::kRejected : Verdict::kCompileError;
  evaluation.reason = candidate.error ? *candidate.error : "build failed: " + excerpt(tail, 200);
  evaluation.code = text;
  evaluation.compiler_output = tail;
  evaluation.test_output = tail;
  evaluation.steps.push_back({"build", "c++ -c " + std::string(kTargetFile), "exit code 1", 0.1, tail});
  Checkpoint checkpoint;
  checkpoint.run_id = "check-input";
  checkpoint.policy = candidate.origin;
  checkpoint.target.file = kTargetFile;
  checkpoint.target.function = "target";
  checkpoint.state.trajectory.push_back({1, candidate, evaluation});
  checkpoint.state.evaluations = 1;
  checkpoint.spend = nlohmann::json::object();
  const fs::path dir = make_unique_dir(fs::temp_directory_path(), "maxcode-check-input-");
  std::string round_trip;
  try {
    write_checkpoint(dir, checkpoint);
    const Checkpoint back = read_checkpoint(dir);
    round_trip = "checkpoint of " + std::to_string(fs::file_size(dir / "checkpoint.json")) + " bytes read back";
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
    throw;
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return scope + "; " + round_trip;
}

class CheckInput : public Subcommand {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* cmd = app.add_subcommand("check-input", "read and check one input; runs nothing");
    cmd->group("");  // hidden: for scripts/fuzz-inputs.sh and by hand
    cmd->add_option("--kind", kind_, "config | job | sweep | replay | reply")
        ->required()
        ->check(CLI::IsMember({"config", "job", "sweep", "replay", "reply"}));
    cmd->add_option("FILE", file_, "the input")->required();
    return cmd;
  }

  int run() override {
    try {
      const std::string summary = check();
      std::cout << "ok: " << summary << "\n";
      return 0;
    } catch (const std::exception& e) {
      std::cerr << "maxcode check-input: " << e.what() << "\n";
      return 1;
    }
  }

 private:
  std::string check() const {
    if (kind_ == "config") {
      const Config config = load_config(file_);
      const llm::LlmConfig llm = llm::parse_llm_config(config.llm, file_.string());
      const std::string echoed = dump_json(to_json(config));
      return std::to_string(config.benchmarks.size()) + " benchmark(s), policy " +
             search_policy_name(config.search.policy) + ", " + std::to_string(echoed.size()) + " bytes as JSON";
    }
    if (kind_ == "job") {
      const JobInput input = load_job_input(file_);
      // As `maxcode run` does: through to_json and the reader once more.
      const JobInput again = parse_job_input(to_json(input), file_.string());
      return "repository " + excerpt(url_without_credentials(again.repository), 80) + ", " +
             std::to_string(again.targets.size()) + " target(s)";
    }
    if (kind_ == "sweep") {
      const SweepInput input = load_sweep_input(file_);
      return std::to_string(input.jobs.size()) + " job(s)";
    }
    if (kind_ == "replay") return carry_candidate(read_candidate_file(file_, "replay"));
    // reply
    const std::string text = read_text(file_);
    const ParsedReply reply = parse_reply(text, "target");
    const std::optional<double> estimate = parse_speedup_estimate(text);
    std::string out = "estimate " + (estimate ? std::to_string(*estimate) : std::string("none")) + "; ";
    if (!reply.code) return out + "no code: " + reply.error;
    Candidate candidate;
    candidate.id = "reply";
    candidate.origin = "maxcode";
    candidate.definition = reply.code;
    candidate.rationale = reply.rationale;
    return out + carry_candidate(candidate);
  }

  std::string kind_;
  fs::path file_;
};

}  // namespace

std::unique_ptr<Subcommand> check_input_command() { return std::make_unique<CheckInput>(); }

}  // namespace maxcode::cli
