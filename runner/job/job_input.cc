#include "runner/job/job_input.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "runner/util/files.h"
#include "runner/util/json_fields.h"
#include "runner/util/json_io.h"
#include "runner/util/json_reader.h"

namespace maxcode {

namespace {

using nlohmann::json;

// Every value is a name, a path, a URL or a ref: none needs more than a path may hold
// (PATH_MAX), and a 50 MB one is a hostile document, not a job.
constexpr std::size_t kMaxString = 4096;

std::string bounded_string(const JsonNode& node) {
  std::string text = node.string();
  if (text.size() > kMaxString)
    node.fail("at most " + std::to_string(kMaxString) + " bytes, got " + std::to_string(text.size()));
  return text;
}

// An element of a list of names (targets).
std::string name(const JsonNode& node) {
  const json& v = node.value();
  if (!v.is_string() || v.get_ref<const std::string&>().empty())
    node.fail("expected a non-empty string, got " + (v.is_string() ? std::string("\"\"") : describe_type(v)));
  return bounded_string(node);
}

// A field that is a name, a path, a URL or a ref.
std::string bounded_field(const JsonObject& f, std::string_view key, std::string fallback = {}) {
  auto node = f.get(key);
  return node ? bounded_string(*node) : fallback;
}

Budget parse_budget(const JsonNode& node) {
  const JsonObject f(node, {"evaluations", "wall_s", "tokens", "dollars", "gpu_s"});
  Budget b;
  // Zero evaluations or zero seconds leave nothing to search: an error, not an empty job.
  if (auto n = f.get("evaluations")) b.evaluations = n->integer(1);
  if (auto n = f.get("wall_s")) b.wall_s = n->number(kPositive);
  b.tokens = f.integer<long>("tokens", 0, 0, std::numeric_limits<long>::max() / 2);
  b.dollars = f.number("dollars", 0, kNonNegative);
  b.gpu_s = f.number("gpu_s", 0, kNonNegative);
  return b;
}

DeliveryInput parse_delivery(const JsonNode& node) {
  const JsonObject f(node, {"mode", "repo", "base", "api_url", "git_url"});
  DeliveryInput d;
  const std::string mode = bounded_field(f, "mode", "none");
  if (mode == "pr") d.mode = DeliveryMode::kPr;
  else if (mode == "dry-run") d.mode = DeliveryMode::kDryRun;
  else if (mode == "none") d.mode = DeliveryMode::kNone;
  else
    f.fail("mode", "expected \"pr\", \"dry-run\" or \"none\", got \"" + mode + "\"");
  d.repo = bounded_field(f, "repo");
  d.base = bounded_field(f, "base");
  d.api_url = bounded_field(f, "api_url", d.api_url);
  d.git_url = bounded_field(f, "git_url");
  // A pull request needs the GitHub repository; a dry run only writes the PR's text, so a
  // local repository needs none (a given one must still be well-formed).
  if (d.mode == DeliveryMode::kPr || (d.mode == DeliveryMode::kDryRun && !d.repo.empty())) {
    const auto slash = d.repo.find('/');
    if (d.repo.empty()) f.fail("repo", "missing: mode \"" + mode + "\" needs the GitHub repository, OWNER/NAME");
    if (slash == std::string::npos || slash == 0 || slash + 1 == d.repo.size() ||
        d.repo.find('/', slash + 1) != std::string::npos)
      f.fail("repo", "expected OWNER/NAME, got \"" + d.repo + "\"");
  }
  return d;
}

// A path in the repository: relative, and not climbing out of it.
void check_relative(const JsonObject& f, std::string_view key, const std::string& path) {
  if (!path.empty() && path.front() == '/')
    f.fail(key, "must be relative to the repository root, got \"" + path + "\"");
  if (escapes_root(path)) f.fail(key, "must stay inside the repository ('..' climbs out of it), got \"" + path + "\"");
}

}  // namespace

const char* delivery_mode_name(DeliveryMode mode) {
  switch (mode) {
    case DeliveryMode::kPr: return "pr";
    case DeliveryMode::kDryRun: return "dry-run";
    case DeliveryMode::kNone: return "none";
  }
  return "none";
}

std::string unknown_policy(std::string_view name) {
  const std::vector<std::string_view> names = search_policy_names();
  std::string choices;
  for (std::size_t i = 0; i < names.size(); ++i)
    choices += std::string(i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
  return "expected " + choices + ", got \"" + std::string(name.substr(0, 40)) + "\"";
}

JobInput parse_job_input(const json& document, const std::string& label) {
  const JsonObject f(JsonNode(document, label, raise_as<JobInputError>),
                     {"$schema", "repository", "ref", "config", "targets", "max_targets", "min_share", "budget",
                      "policy", "replay_dir", "git_token_env", "delivery", "compare_with"});
  JobInput in;
  in.repository = bounded_field(f, "repository");
  if (in.repository.empty()) f.fail("repository", "missing required field (a URL or a local path)");
  in.ref = bounded_field(f, "ref");
  in.config = bounded_field(f, "config");
  check_relative(f, "config", in.config);
  in.targets = f.strings("targets", {}, name);
  in.max_targets = f.integer("max_targets", in.max_targets, 1);
  in.min_share = f.number("min_share", in.min_share, kNonNegative);
  if (in.min_share > 1) f.fail("min_share", "must be a share between 0 and 1, got " + std::to_string(in.min_share));
  if (auto b = f.get("budget")) in.budget = parse_budget(*b);
  if (const std::string policy = bounded_field(f, "policy"); !policy.empty()) {
    in.policy = policy_named(policy);
    if (!in.policy) f.fail("policy", unknown_policy(policy));
  }
  in.replay_dir = bounded_field(f, "replay_dir");
  check_relative(f, "replay_dir", in.replay_dir);
  in.git_token_env = bounded_field(f, "git_token_env", in.git_token_env);
  if (auto d = f.get("delivery")) in.delivery = parse_delivery(*d);
  in.compare_with = bounded_field(f, "compare_with");
  return in;
}

JobInput load_job_input(const std::filesystem::path& file) {
  json document;
  try {
    document = parse_json_input(read_text(file), file.string());
  } catch (const std::exception& e) {  // JsonInputError, or the file cannot be read
    throw JobInputError(e.what());
  }
  return parse_job_input(document, file.string());
}

json to_json(const JobInput& in) {
  json budget = json::object();
  if (in.budget.evaluations) budget["evaluations"] = *in.budget.evaluations;
  if (in.budget.wall_s) budget["wall_s"] = *in.budget.wall_s;
  if (in.budget.tokens) budget["tokens"] = in.budget.tokens;
  if (in.budget.dollars) budget["dollars"] = in.budget.dollars;
  if (in.budget.gpu_s) budget["gpu_s"] = in.budget.gpu_s;
  json delivery = {{"mode", delivery_mode_name(in.delivery.mode)}, {"api_url", in.delivery.api_url}};
  if (!in.delivery.repo.empty()) delivery["repo"] = in.delivery.repo;
  if (!in.delivery.base.empty()) delivery["base"] = in.delivery.base;
  if (!in.delivery.git_url.empty()) delivery["git_url"] = in.delivery.git_url;
  json j = {{"repository", in.repository}, {"max_targets", in.max_targets}, {"min_share", in.min_share}, {"budget", budget},
            {"git_token_env", in.git_token_env}, {"delivery", delivery}};
  if (!in.ref.empty()) j["ref"] = in.ref;
  if (!in.config.empty()) j["config"] = in.config;
  if (!in.targets.empty()) j["targets"] = in.targets;
  if (in.policy) j["policy"] = search_policy_name(*in.policy);
  if (!in.replay_dir.empty()) j["replay_dir"] = in.replay_dir;
  if (!in.compare_with.empty()) j["compare_with"] = in.compare_with;
  return j;
}

Budget parse_budget_flag(const std::string& text, Budget budget) {
  json fields = json::object();
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw JobInputError("--budget: expected NAME=VALUE, got \"" + item + "\"");
    const std::string value = item.substr(eq + 1);
    try {
      std::size_t used = 0;
      const double x = std::stod(value, &used);
      if (used != value.size()) throw std::invalid_argument(value);
      fields[item.substr(0, eq)] = x == std::trunc(x) ? json(static_cast<long>(x)) : json(x);
    } catch (const std::out_of_range&) {  // 1e999
      throw JobInputError("--budget: " + item.substr(0, eq) + ": number out of range: " + excerpt(value, 40));
    } catch (const std::logic_error&) {
      throw JobInputError("--budget: " + item.substr(0, eq) + ": expected a number, got \"" + excerpt(value, 40) + "\"");
    }
  }
  const std::string label = "--budget";
  const Budget given = parse_budget(JsonNode(fields, label, raise_as<JobInputError>).at_path("budget"));
  if (fields.contains("evaluations")) budget.evaluations = given.evaluations;
  if (fields.contains("wall_s")) budget.wall_s = given.wall_s;
  if (fields.contains("tokens")) budget.tokens = given.tokens;
  if (fields.contains("dollars")) budget.dollars = given.dollars;
  if (fields.contains("gpu_s")) budget.gpu_s = given.gpu_s;
  return budget;
}

}  // namespace maxcode
