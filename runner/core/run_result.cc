#include "runner/core/run_result.h"

#include <stdexcept>
#include <string_view>

#include "runner/util/json_reader.h"

namespace maxcode {

const ResultCandidate* RunResult::candidate(const std::string& id) const {
  for (const ResultCandidate& c : candidates)
    if (c.evaluation.candidate_id == id) return &c;
  return nullptr;
}

std::string RunResult::environment_text(const std::string& key) const {
  return environment.is_object() && environment.contains(key) && environment[key].is_string()
             ? environment[key].get<std::string>()
             : "";
}

namespace {

nlohmann::json to_json(const ResultWinner& w) {
  const Timing& t = w.confirmed;
  nlohmann::json j{{"id", w.id},
                   {"speedup", maxcode::to_json(t.speedup)},
                   {"baseline_median_s", t.baseline_median_s},
                   {"candidate_median_s", t.candidate_median_s},
                   {"confirmation", maxcode::to_json(t)},
                   {"search_speedup", w.search_speedup ? maxcode::to_json(*w.search_speedup) : nlohmann::json(nullptr)},
                   {"precision", nlohmann::json::array()}};
  if (!w.gpu.empty()) j["gpu"] = w.gpu;
  for (const OutputError& p : w.precision) j["precision"].push_back(maxcode::to_json(p));
  if (!w.call_check.empty()) j["call_check"] = w.call_check;
  if (w.witness) j["witness"] = maxcode::to_json(*w.witness);
  if (!w.tests.empty()) j["tests"] = w.tests;
  return j;
}

nlohmann::json to_json(const ResultCandidate& c) {
  nlohmann::json j = maxcode::to_json(c.evaluation);
  j["step"] = c.step;
  j["origin"] = c.origin;
  if (!c.knobs.empty()) j["knobs"] = c.knobs;
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

}  // namespace

nlohmann::json to_json(const RunResult& r) {
  nlohmann::json candidates = nlohmann::json::array();
  double wall = 0, child = 0;
  for (const ResultCandidate& c : r.candidates) {
    candidates.push_back(to_json(c));
    if (!c.evaluation.duplicate_of) {
      wall += c.evaluation.wall_s;
      child += c.evaluation.child_s;
    }
  }
  nlohmann::json audit = nlohmann::json::array();
  for (const BenchmarkAudit& a : r.audit) audit.push_back(to_json(a));
  nlohmann::json j{
      {"schema", kResultSchema},
      {"command", r.command},
      {"repository",
       {{"path", r.repository.path}, {"commit", r.repository.commit}, {"local_changes", r.repository.local_changes}}},
      {"target", to_json(r.target)},
      {"policy", r.policy},
      {"environment", r.environment},
      {"settings", r.settings},
      {"noise", r.noise ? to_json(*r.noise) : nlohmann::json(nullptr)},
      {"candidates", candidates},
      {"winner", r.winner ? to_json(*r.winner) : nlohmann::json(nullptr)},
      {"stop_reason", r.stop_reason},
      {"evaluations", r.evaluations},
      {"warnings", r.warnings},
      {"audit", audit},
      {"started_at", r.started_at},
      {"wall_s", r.wall_s},
      // What the evaluator's own work cost against the child processes it ran (derived).
      {"evaluator_cost", {{"wall_s", wall}, {"child_s", child}, {"ratio", child > 0 ? wall / child : 0}}}};
  if (r.unconfirmed) j["unconfirmed"] = *r.unconfirmed;
  if (r.fatal) j["fatal"] = *r.fatal;
  if (!r.spend.is_null()) j["spend"] = r.spend;
  if (!r.gpu.is_null()) j["gpu"] = r.gpu;
  if (!r.tests.empty()) j["tests"] = r.tests;
  return j;
}

namespace {

[[noreturn]] void raise(const std::string& message) { throw RunResultError(message); }

// result.json is a document maxcode wrote, read back by this version or another: its
// objects are open (a field may be new or gone, null is absent), its values still checked.
JsonObject object_at(const JsonNode& node) { return JsonObject::open(node); }

// A free-form object kept as it is (environment, settings, knobs, tests); {} when absent.
nlohmann::json open_object(const JsonObject& object, std::string_view key) {
  const auto node = object.get(key);
  return node ? object_at(*node).node().value() : nlohmann::json::object();
}

// A part read by one of core's own readers (evaluation_from_json, timing_from_json, ...):
// what they throw becomes a RunResultError naming the part's path.
template <class Read>
auto read_part(const JsonNode& node, Read read) {
  object_at(node);
  try {
    return read(node.value());
  } catch (const nlohmann::json::exception& e) {
    // "[json.exception.out_of_range.403] key 'x' not found" -> "key 'x' not found"
    const std::string_view what = e.what();
    const std::size_t cut = what.find("] ");
    node.fail(std::string(cut == std::string_view::npos ? what : what.substr(cut + 2)));
  } catch (const std::invalid_argument& e) {
    node.fail(e.what());
  }
}

Target read_target(const JsonObject& root) {
  const JsonObject t = object_at(root.require("target"));
  Target target;
  target.file = t.require("file").non_empty_string();
  target.function = t.require("function").non_empty_string();
  target.signature = t.string("signature");
  target.line_begin = t.integer<std::size_t>("line_begin", 0, 0);
  target.line_end = t.integer<std::size_t>("line_end", 0, 0);
  target.unit = t.strings("unit", {});
  target.unit_notes = t.strings("unit_notes", {});
  return target;
}

ResultRepository read_repository(const JsonObject& root) {
  ResultRepository repository;
  if (const auto node = root.get("repository")) {
    const JsonObject r = object_at(*node);
    repository.path = r.string("path");
    repository.commit = r.string("commit");
    repository.local_changes = r.strings("local_changes", {});
  }
  return repository;
}

ResultCandidate read_candidate(const JsonNode& node) {
  ResultCandidate c;
  c.evaluation = read_part(node, evaluation_from_json);
  const JsonObject o = object_at(node);
  c.step = o.integer<int>("step", c.step, 0);
  c.origin = o.string("origin");
  c.knobs = open_object(o, "knobs");
  c.note = o.string("note");
  return c;
}

ResultWinner read_winner(const JsonNode& node) {
  const JsonObject w = object_at(node);
  ResultWinner winner;
  winner.id = w.require("id").non_empty_string();
  if (!w.has("confirmation")) w.fail("confirmation", "missing required field (the confirmation session's timing)");
  winner.confirmed = read_part(w.require("confirmation"), timing_from_json);
  if (const auto n = w.get("search_speedup")) winner.search_speedup = read_part(*n, interval_from_json);
  winner.gpu = open_object(w, "gpu");
  for (const JsonNode& p : w.elements("precision")) winner.precision.push_back(read_part(p, output_error_from_json));
  winner.call_check = w.string("call_check");
  if (const auto n = w.get("witness")) winner.witness = read_part(*n, witness_record_from_json);
  winner.tests = open_object(w, "tests");
  return winner;
}

std::optional<std::string> optional_text(const JsonObject& root, std::string_view key) {
  const auto n = root.get(key);
  return n ? std::optional(n->string()) : std::nullopt;
}

}  // namespace

RunResult run_result_from_json(const nlohmann::json& j, const std::string& label) {
  const JsonObject root = object_at(JsonNode(j, label, raise));
  if (!root.has("schema")) root.fail("schema", std::string("missing; this maxcode reads ") + kResultSchema);
  const JsonNode schema = root.require("schema");
  if (const std::string s = schema.string(); s != kResultSchema)
    schema.fail("'" + s + "', this maxcode reads " + kResultSchema);
  RunResult r;
  r.command = root.string("command");
  r.repository = read_repository(root);
  r.target = read_target(root);
  r.policy = root.string("policy");
  r.environment = open_object(root, "environment");
  r.settings = open_object(root, "settings");
  if (const auto n = root.get("noise")) r.noise = read_part(*n, timing_from_json);
  for (const JsonNode& c : root.elements("candidates")) r.candidates.push_back(read_candidate(c));
  if (const auto n = root.get("winner")) r.winner = read_winner(*n);
  r.unconfirmed = optional_text(root, "unconfirmed");
  r.fatal = optional_text(root, "fatal");
  r.stop_reason = root.string("stop_reason");
  r.evaluations = root.integer<int>("evaluations", r.evaluations, 0);
  r.warnings = root.strings("warnings", {});
  for (const JsonNode& a : root.elements("audit")) r.audit.push_back(read_part(a, benchmark_audit_from_json));
  r.started_at = root.string("started_at");
  r.wall_s = root.number("wall_s", r.wall_s, kNonNegative);
  if (const auto n = root.get("spend")) r.spend = object_at(*n).node().value();
  if (const auto n = root.get("gpu")) r.gpu = object_at(*n).node().value();
  r.tests = open_object(root, "tests");
  return r;
}

}  // namespace maxcode
