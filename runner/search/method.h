// The parts of one search, built from the config: the policy, and for the LLM presets
// the providers, prompts, critic and reranker. Policy names and critic/reranker
// choices are resolved here, with errors that say what to configure.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "runner/core/config.h"
#include "runner/core/environment.h"
#include "runner/llm/provider.h"
#include "runner/search/critic.h"
#include "runner/search/policy.h"
#include "runner/search/prompts.h"
#include "runner/search/reranker.h"
#include "runner/search/spend.h"
#include "runner/workspace/knobs.h"

namespace maxcode {

struct Method {
  Prompts prompts;
  TargetContext context;
  std::vector<std::unique_ptr<llm::Provider>> providers;  // owned; the parts below use them
  std::unique_ptr<Policy> policy;
  std::unique_ptr<Critic> critic;      // null: no critiques
  std::unique_ptr<Reranker> reranker;  // null: no reranking
};

struct MethodInputs {
  const Config& config;
  std::filesystem::path repo;        // for .maxcode/prompts overrides and relative replay dirs
  std::filesystem::path replay_dir;  // from the command line; overrides the config's
  TargetContext context;
  std::vector<Knob> knobs;
  Environment env;  // read by the CLI: the models' key variables
};

// Checks, before anything is built or run, that the configured policy has what it
// needs: knobs for tune (search.knobs, or a `maxcode: tune` comment in the repository's
// sources), an existing non-empty replay directory, a model and its key variable for
// the LLM presets, critic and reranker. `replay_dir` as in MethodInputs. Throws
// PolicyError saying what to configure.
// Before a target's original is built and timed (an A/A session costs minutes): why no
// candidate of the configured policy can change `unit_names` in `file`, or empty when
// one can. For replay, none of its files defines a function of the unit or changes the
// file; other policies write for the target and always can.
std::string why_nothing_reaches(const Config& config, const std::filesystem::path& repo,
                                const std::filesystem::path& replay_dir, const std::vector<std::string>& unit_names,
                                const std::string& file);

void check_policy_inputs(const Config& config, const std::filesystem::path& repo,
                         const std::filesystem::path& replay_dir, const Environment& env);

// Never moved once built: the policy, critic and reranker refer into it.
std::unique_ptr<Method> make_method(const MethodInputs& inputs, Spend& spend);

}  // namespace maxcode
