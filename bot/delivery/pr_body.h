// The pull request a result becomes: its title and its body.
//
// Title: "perf: speed up <fn> 1.75x (-43% time)". Body, most important first: what
// changed and by how much; the results table (medians, interval, rounds, threshold);
// correctness evidence; the critique, labelled as model-written; the environment; a
// command to reproduce; the trajectory in a collapsed section; hidden metadata
// (pr_metadata.h). Text that came from a model or the repository is sanitized
// (sanitize.h). GitHub refuses bodies over 65,536 characters, so sections are shortened
// and then dropped, least important first (trajectory, rationale, environment, ...),
// and the body says what was left out.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bot/delivery/delivery_input.h"

namespace maxcode::bot {

inline constexpr std::size_t kGithubBodyLimit = 65536;

// What the delivery knows beyond result.json.
struct PrContext {
  std::string repo;           // OWNER/NAME
  std::string branch;         // maxcode/<path-slug>/<function>
  std::string base_commit;    // the commit the branch starts from
  std::string target_hash;    // code_hash() of the original function ("" when unknown)
  int superseded_pr = 0;      // a closed PR for the same target whose code has changed
};

struct PrText {
  std::string title;
  std::string body;
  nlohmann::json metadata;            // what the body's hidden comment holds
  std::vector<std::string> trimmed;   // sections shortened or left out to fit
};

std::string pr_title(const DeliveryInput& input);

// `limit` is in bytes, which is never fewer than GitHub's characters.
PrText compose_pr(const DeliveryInput& input, const PrContext& context,
                  std::size_t limit = kGithubBodyLimit);
// "-43%" for 1.75x: the change in time.
std::string time_change(double speedup);

}  // namespace maxcode::bot
