// Prompt templates. The defaults follow the MaxCode paper (arXiv 2601.05475): the
// generator sees the original, the best-so-far with its feedback, the trajectory with
// feedback and critiques, and is told to fix a compile error, else a logic error, else
// to beat the best; the critic diagnoses the bottleneck or the failure; the reranker
// estimates the best speedup still reachable.
//
// A repository overrides any of them with a file .maxcode/prompts/<name>.md. Templates
// use {{name}} placeholders; docs/prompts.md lists the names each template gets.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace maxcode {

struct Prompts {
  std::string system;    // system message for every call
  std::string propose;   // generator
  std::string critique;  // critic
  std::string rerank;    // reward-to-go estimate
};

Prompts default_prompts();
// Defaults, with each template that `<root>/.maxcode/prompts/<name>.md` provides
// replaced by that file.
Prompts load_prompts(const std::filesystem::path& root);

// Replaces each {{name}} with vars[name]. A placeholder with no value is an error
// naming it (a template typo must not silently drop the trajectory from a prompt).
std::string render_template(std::string_view text, const std::map<std::string, std::string>& vars);

}  // namespace maxcode
