#include "runner/job/job_record.h"

#include <cstdio>
#include <stdexcept>

#include "runner/util/files.h"
#include "runner/util/json_io.h"
#include "runner/util/slug.h"

namespace maxcode {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json interval_json(const RatioInterval& r) {
  return {{"median", r.median}, {"low", r.low}, {"high", r.high}, {"rounds", r.rounds}};
}

RatioInterval interval_from(const json& j) {
  return {j.value("median", 0.0), j.value("low", 0.0), j.value("high", 0.0), j.value("rounds", 0)};
}

// A name of no known value, thrown as the json::exception a wrong shape is: a reader of
// another version's record (the service's job page) leaves either out alike.
struct UnknownName : json::exception {
  explicit UnknownName(const std::string& what) : json::exception(0, what.c_str()) {}
};

// The value named at `key` ("status: unknown target status 'paused'" if none is).
template <class Enum>
Enum named(const json& j, const char* key, const char* absent, Enum (*from_name)(std::string_view)) {
  const std::string name = j.value(key, absent);
  try {
    return from_name(name);
  } catch (const std::invalid_argument& e) {
    throw UnknownName(std::string(key) + ": " + e.what());
  }
}

}  // namespace

TargetRecord target_record_from_json(const json& j) {
  TargetRecord t;
  t.slug = j.at("slug");
  t.function = j.at("function");
  t.signature = j.value("signature", "");
  t.file = j.value("file", "");
  t.line = j.value("line", 0);
  if (j.contains("share") && j["share"].is_number()) t.share = j["share"].get<double>();
  t.self_ns = j.value("self_ns", 0.0);
  t.samples = j.value("samples", std::uint64_t{0});
  if (j.contains("benchmark_entries") && j["benchmark_entries"].is_object())
    t.benchmark_entries = j["benchmark_entries"].get<std::map<std::string, std::vector<std::string>>>();
  t.status = named(j, "status", "pending", target_status_from_name);
  t.verdict = named(j, "verdict", "", target_verdict_from_name);
  t.reason = j.value("reason", "");
  if (j.contains("speedup") && j["speedup"].is_object()) t.speedup = interval_from(j["speedup"]);
  t.original_s = j.value("original_s", 0.0);
  t.original_rounds = j.value("original_rounds", std::vector<double>{});
  if (j.contains("check") && j["check"].is_object()) t.check = regression_check_from_json(j["check"]);
  if (j.contains("pr") && j["pr"].is_object()) {
    const json& p = j["pr"];
    t.pr = PrRecord{p.value("outcome", ""), p.value("number", 0), p.value("url", ""), p.value("branch", ""),
                    p.value("title", ""), p.value("message", "")};
  }
  t.no_pr = j.value("no_pr", "");
  if (j.contains("allowance")) t.allowance = allowance_from_json(j["allowance"]);
  if (j.contains("spent")) t.spent = allowance_from_json(j["spent"]);
  return t;
}

std::string target_slug(const std::string& file, const std::string& function) {
  return ref_slug(file) + "--" + ref_slug(function);
}

json to_json(const TargetRecord& t) {
  json j = {{"slug", t.slug},
            {"function", t.function},
            {"signature", t.signature},
            {"file", t.file},
            {"line", t.line},
            {"share", t.share ? json(*t.share) : json(nullptr)},
            {"self_ns", t.self_ns},
            {"samples", t.samples},
            {"status", target_status_name(t.status)},
            {"verdict", target_verdict_name(t.verdict)},
            {"reason", t.reason},
            {"speedup", t.speedup ? interval_json(*t.speedup) : json(nullptr)},
            {"original_s", t.original_s},
            {"original_rounds", t.original_rounds},
            {"no_pr", t.no_pr},
            {"allowance", to_json(t.allowance)},
            {"spent", to_json(t.spent)},
            {"result_dir", "targets/" + t.slug}};
  j["check"] = t.check ? to_json(*t.check) : json(nullptr);
  if (!t.benchmark_entries.empty()) j["benchmark_entries"] = t.benchmark_entries;
  if (t.pr)
    j["pr"] = {{"outcome", t.pr->outcome}, {"number", t.pr->number}, {"url", t.pr->url},
               {"branch", t.pr->branch}, {"title", t.pr->title}, {"message", t.pr->message}};
  else
    j["pr"] = nullptr;
  return j;
}

json to_json(const JobRecord& job) {
  json targets = json::array();
  for (const TargetRecord& t : job.targets) targets.push_back(to_json(t));
  return {{"schema", "maxcode-job/1"},
          {"status", job_status_name(job.status)},
          {"error", job.error},
          {"error_kind", job.error_kind},
          {"exit_code", job.exit_code},
          {"input", to_json(job.input)},
          {"repository", job.repository},
          {"ref", job.ref},
          {"commit", job.commit},
          {"started_at", job.started_at},
          {"finished_at", job.finished_at},
          {"budget", to_json(job.budget)},
          {"spent", to_json(job.spent)},
          {"targets", targets},
          {"profile", job.profile}};
}

JobRecord read_job_record(const fs::path& file) {
  JobRecord job;
  try {
    const json j = parse_json_input(read_text(file), file.string());
    if (j.value("schema", "") != "maxcode-job/1") throw std::runtime_error("not a maxcode job.json");
    job.input = parse_job_input(j.at("input"), file.string() + ": input");
    job.status = named(j, "status", "running", job_status_from_name);
    job.error = j.value("error", "");
    job.error_kind = j.value("error_kind", "");
    job.exit_code = j.value("exit_code", 0);
    job.repository = j.value("repository", "");
    job.ref = j.value("ref", "");
    job.commit = j.value("commit", "");
    job.started_at = j.value("started_at", "");
    job.finished_at = j.value("finished_at", "");
    job.budget = allowance_from_json(j.value("budget", json::object()));
    job.spent = allowance_from_json(j.value("spent", json::object()));
    for (const json& t : j.value("targets", json::array())) job.targets.push_back(target_record_from_json(t));
    job.profile = j.value("profile", json::array());
  } catch (const JobInputError&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": cannot resume from it: " + e.what());
  }
  return job;
}

void write_job_record(const fs::path& file, const JobRecord& job) {
  const fs::path temporary = file.string() + ".tmp";
  write_text(temporary, dump_json(to_json(job), 2) + "\n");
  fs::rename(temporary, file);
}

}  // namespace maxcode
