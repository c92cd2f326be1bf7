#include "runner/job/job_input.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "runner/util/files.h"
#include "runner/util/json_fields.h"
#include "runner/util/json_io.h"

namespace maxcode {

namespace {

using nlohmann::json;

// One object of the document: unknown fields are errors, each read names its path.
class Fields {
 public:
  Fields(const json& value, std::string path, std::string label, std::vector<std::string_view> known)
      : value_(value), path_(std::move(path)), label_(std::move(label)) {
    if (!value_.is_object()) fail_at(path_, "expected an object, got " + describe_type(value_));
    for (const auto& [key, item] : value_.items())
      if (std::find(known.begin(), known.end(), key) == known.end())
        fail_at(at(excerpt(key, 60)), "unknown field (" + suggest_field(key, known) + ")");
  }

  [[noreturn]] void fail_at(const std::string& path, const std::string& problem) const {
    // A value quoted in `problem` may be megabytes long (a hostile document): quote a part.
    throw JobInputError(label_ + ": " + (path.empty() ? "" : excerpt(path, 200) + ": ") + excerpt(problem, 1000));
  }
  std::string at(std::string_view key) const { return path_.empty() ? std::string(key) : path_ + "." + std::string(key); }
  const json* find(std::string_view key) const {
    auto it = value_.find(key);
    return it == value_.end() ? nullptr : &*it;
  }
  const std::string& label() const { return label_; }

  std::string string(std::string_view key, std::string fallback = {}) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_string()) fail_at(at(key), "expected a string, got " + describe_type(*v));
    check_length(at(key), v->get_ref<const std::string&>());
    return v->get<std::string>();
  }
  std::optional<double> number(std::string_view key, double min, bool strict) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_number()) fail_at(at(key), "expected a number, got " + describe_type(*v));
    const double x = v->get<double>();
    if (strict ? !(x > min) : !(x >= min))
      fail_at(at(key), std::string("must be ") + (strict ? "> " : ">= ") + std::to_string(static_cast<long>(min)) +
                           ", got " + dump_json(*v));
    return x;
  }
  std::optional<long> integer(std::string_view key, long min, long max = std::numeric_limits<int>::max()) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_number() || v->get<double>() != std::trunc(v->get<double>()))
      fail_at(at(key), "expected an integer, got " + (v->is_number() ? dump_json(*v) : describe_type(*v)));
    // Compared as doubles first: 1e300 or 2^64 would not survive the conversion to long.
    if (v->get<double>() > static_cast<double>(max) || (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(max)))
      fail_at(at(key), "must be <= " + std::to_string(max) + ", got " + dump_json(*v));
    const long x = v->get<double>() < static_cast<double>(min) ? min - 1 : v->get<long>();
    if (x < min) fail_at(at(key), "must be >= " + std::to_string(min) + ", got " + dump_json(*v));
    return x;
  }
  std::vector<std::string> strings(std::string_view key) const {
    const json* v = find(key);
    if (!v) return {};
    if (!v->is_array()) fail_at(at(key), "expected an array of strings, got " + describe_type(*v));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v->size(); ++i) {
      const json& item = (*v)[i];
      if (!item.is_string() || item.get<std::string>().empty())
        fail_at(at(key) + "[" + std::to_string(i) + "]",
                "expected a non-empty string, got " + (item.is_string() ? "\"\"" : describe_type(item)));
      check_length(at(key) + "[" + std::to_string(i) + "]", item.get_ref<const std::string&>());
      out.push_back(item.get<std::string>());
    }
    return out;
  }

 private:
  // Every value is a name, a path, a URL or a ref: none needs more than a path may hold
  // (PATH_MAX), and a 50 MB one is a hostile document, not a job.
  static constexpr std::size_t kMaxString = 4096;
  void check_length(const std::string& path, const std::string& text) const {
    if (text.size() > kMaxString)
      fail_at(path, "at most " + std::to_string(kMaxString) + " bytes, got " + std::to_string(text.size()));
  }

  const json& value_;
  std::string path_, label_;
};

Budget parse_budget(const Fields& parent, const json& value) {
  Fields f(value, parent.at("budget"), parent.label(), {"evaluations", "wall_s", "tokens", "dollars", "gpu_s"});
  Budget b;
  // Zero evaluations or zero seconds leave nothing to search: an error, not an empty job.
  if (auto n = f.integer("evaluations", 1)) b.evaluations = static_cast<int>(*n);
  b.wall_s = f.number("wall_s", 0, true);
  b.tokens = f.integer("tokens", 0, std::numeric_limits<long>::max() / 2).value_or(0);
  b.dollars = f.number("dollars", 0, false).value_or(0);
  b.gpu_s = f.number("gpu_s", 0, false).value_or(0);
  return b;
}

DeliveryInput parse_delivery(const Fields& parent, const json& value) {
  Fields f(value, parent.at("delivery"), parent.label(), {"mode", "repo", "base", "api_url", "git_url"});
  DeliveryInput d;
  const std::string mode = f.string("mode", "none");
  if (mode == "pr") d.mode = DeliveryMode::kPr;
  else if (mode == "dry-run") d.mode = DeliveryMode::kDryRun;
  else if (mode == "none") d.mode = DeliveryMode::kNone;
  else f.fail_at(f.at("mode"), "expected \"pr\", \"dry-run\" or \"none\", got \"" + mode + "\"");
  d.repo = f.string("repo");
  d.base = f.string("base");
  d.api_url = f.string("api_url", d.api_url);
  d.git_url = f.string("git_url");
  // A pull request needs the GitHub repository; a dry run only writes the PR's text, so a
  // local repository needs none (a given one must still be well-formed).
  if (d.mode == DeliveryMode::kPr || (d.mode == DeliveryMode::kDryRun && !d.repo.empty())) {
    const auto slash = d.repo.find('/');
    if (d.repo.empty())
      f.fail_at(f.at("repo"), "missing: mode \"" + mode + "\" needs the GitHub repository, OWNER/NAME");
    if (slash == std::string::npos || slash == 0 || slash + 1 == d.repo.size() ||
        d.repo.find('/', slash + 1) != std::string::npos)
      f.fail_at(f.at("repo"), "expected OWNER/NAME, got \"" + d.repo + "\"");
  }
  return d;
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

JobInput parse_job_input(const json& document, const std::string& label) {
  Fields f(document, "", label,
           {"$schema", "repository", "ref", "config", "targets", "max_targets", "min_share", "budget", "policy", "replay_dir",
            "git_token_env", "delivery", "compare_with"});
  JobInput in;
  in.repository = f.string("repository");
  if (in.repository.empty()) f.fail_at("repository", "missing required field (a URL or a local path)");
  in.ref = f.string("ref");
  in.config = f.string("config");
  if (!in.config.empty() && in.config.front() == '/')
    f.fail_at("config", "must be relative to the repository root, got \"" + in.config + "\"");
  if (escapes_root(in.config))
    f.fail_at("config", "must stay inside the repository ('..' climbs out of it), got \"" + in.config + "\"");
  in.targets = f.strings("targets");
  in.max_targets = static_cast<int>(f.integer("max_targets", 1).value_or(in.max_targets));
  in.min_share = f.number("min_share", 0, false).value_or(in.min_share);
  if (in.min_share > 1) f.fail_at("min_share", "must be a share between 0 and 1, got " + std::to_string(in.min_share));
  if (const json* b = f.find("budget")) in.budget = parse_budget(f, *b);
  in.policy = f.string("policy");
  if (!in.policy.empty() && in.policy != "tune" && in.policy != "replay" && in.policy != "maxcode" &&
      in.policy != "cuda-llm" && in.policy != "effilearner")
    f.fail_at("policy", "expected tune, replay, maxcode, cuda-llm or effilearner, got \"" + in.policy + "\"");
  in.replay_dir = f.string("replay_dir");
  if (!in.replay_dir.empty() && in.replay_dir.front() == '/')
    f.fail_at("replay_dir", "must be relative to the repository root, got \"" + in.replay_dir + "\"");
  if (escapes_root(in.replay_dir))
    f.fail_at("replay_dir", "must stay inside the repository ('..' climbs out of it), got \"" + in.replay_dir + "\"");
  in.git_token_env = f.string("git_token_env", in.git_token_env);
  if (const json* d = f.find("delivery")) in.delivery = parse_delivery(f, *d);
  in.compare_with = f.string("compare_with");
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
  if (!in.policy.empty()) j["policy"] = in.policy;
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
  const json holder = json::object({{"budget", fields}});
  Fields f(holder, "", "--budget", {"budget"});
  const Budget given = parse_budget(f, fields);
  if (fields.contains("evaluations")) budget.evaluations = given.evaluations;
  if (fields.contains("wall_s")) budget.wall_s = given.wall_s;
  if (fields.contains("tokens")) budget.tokens = given.tokens;
  if (fields.contains("dollars")) budget.dollars = given.dollars;
  if (fields.contains("gpu_s")) budget.gpu_s = given.gpu_s;
  return budget;
}

}  // namespace maxcode
