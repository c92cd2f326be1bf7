#include "bot/service/queue/job_result.h"

#include <stdexcept>

#include "runner/util/json_reader.h"

namespace maxcode::bot::service {

namespace {

using nlohmann::json;

struct JobResultError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The stored result is the service's own document, read back by this version or
// another: open objects (JsonObject::open), values checked.
TargetDelivery read_delivery(const JsonNode& node) {
  const JsonObject d = JsonObject::open(node);
  return {d.require("target").string(), d.require("outcome").string(), d.string("pr")};
}

std::map<std::string, double> read_speedups(const JsonNode& node) {
  std::map<std::string, double> out;
  for (const auto& [function, speedup] : JsonObject::open(node).members()) out[function] = speedup.number();
  return out;
}

JobResult read(const JsonNode& root) {
  const JsonObject o = JsonObject::open(root);
  JobResult r;
  r.dir = o.string("dir");
  r.exit_code = o.integer<int>("exit_code", r.exit_code, -1000000);
  r.log = o.string("log");
  r.targets = o.strings("targets", {});
  if (const auto job = o.get("job")) r.job = job->value();
  for (const JsonNode& d : o.elements("deliveries")) r.deliveries.push_back(read_delivery(d));
  if (const auto speedups = o.get("speedups")) r.speedups = read_speedups(*speedups);
  if (const auto rows = o.get("history_rows")) r.history_rows = rows->integer(0);
  r.unreadable = o.string("unreadable");
  return r;
}

}  // namespace

std::string JobResult::run_error() const {
  if (!job.is_object() || !job.contains("error") || !job["error"].is_string()) return "";
  return job["error"].get<std::string>();
}

std::vector<TargetRecord> JobResult::target_records() const {
  std::vector<TargetRecord> out;
  if (!job.is_object() || !job.contains("targets") || !job["targets"].is_array()) return out;
  for (const json& t : job["targets"]) try {
      out.push_back(target_record_from_json(t));
    } catch (const json::exception&) {
      continue;  // a runner of another version: its files still show
    }
  return out;
}

json to_json(const JobResult& r) {
  if (r.empty()) return nullptr;
  json deliveries = json::array();
  for (const TargetDelivery& d : r.deliveries) {
    json one{{"target", d.target}, {"outcome", d.outcome}};
    if (!d.pr.empty()) one["pr"] = d.pr;
    deliveries.push_back(std::move(one));
  }
  json j{{"dir", r.dir}, {"exit_code", r.exit_code}, {"log", r.log}, {"targets", r.targets}, {"job", r.job}};
  if (!r.deliveries.empty()) j["deliveries"] = std::move(deliveries);
  if (!r.speedups.empty()) j["speedups"] = r.speedups;
  if (r.history_rows) j["history_rows"] = *r.history_rows;
  if (!r.unreadable.empty()) j["unreadable"] = r.unreadable;
  return j;
}

constexpr const char* kLabel = "the job's stored result";

JobResult job_result_from_json(const json& j) {
  if (j.is_null()) return {};
  static const std::string label = kLabel;
  try {
    return read(JsonNode(j, label, raise_as<JobResultError>));
  } catch (const JobResultError& e) {
    JobResult r;
    r.unreadable = e.what();
    return r;
  }
}

JobResult job_result_from_text(const std::string& text) {
  const json stored = json::parse(text, nullptr, false);
  if (!stored.is_discarded()) return job_result_from_json(stored);
  JobResult r;
  r.unreadable = std::string(kLabel) + ": not JSON";
  return r;
}

}  // namespace maxcode::bot::service
