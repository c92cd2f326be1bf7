#include "bot/service/queue/job_result.h"

#include <stdexcept>

#include "runner/util/json_reader.h"

namespace maxcode::bot::service {

namespace {

using nlohmann::json;

struct JobResultError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string text_at(const JsonNode& object, std::string_view key) {
  return object.value().contains(key) ? object.child(key).string() : std::string();
}

std::vector<TargetDelivery> read_deliveries(const JsonNode& node) {
  node.expect(node.value().is_array(), "an array");
  std::vector<TargetDelivery> out;
  for (std::size_t i = 0; i < node.value().size(); ++i) {
    const JsonNode d = node.element(i);
    d.expect(d.value().is_object(), "an object");
    out.push_back({d.child("target").string(), d.child("outcome").string(), text_at(d, "pr")});
  }
  return out;
}

std::map<std::string, double> read_speedups(const JsonNode& node) {
  node.expect(node.value().is_object(), "an object");
  std::map<std::string, double> out;
  for (const auto& [function, _] : node.value().items()) out[function] = node.child(function).number();
  return out;
}

JobResult read(const JsonNode& root) {
  root.expect(root.value().is_object(), "an object");
  JobResult r;
  const json& j = root.value();
  r.dir = text_at(root, "dir");
  if (j.contains("exit_code")) r.exit_code = root.child("exit_code").integer(-1000000);
  r.log = text_at(root, "log");
  if (j.contains("targets")) r.targets = root.child("targets").strings();
  if (j.contains("job")) r.job = j["job"];
  if (j.contains("deliveries")) r.deliveries = read_deliveries(root.child("deliveries"));
  if (j.contains("speedups")) r.speedups = read_speedups(root.child("speedups"));
  if (j.contains("history_rows")) r.history_rows = root.child("history_rows").integer(0);
  r.unreadable = text_at(root, "unreadable");
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
