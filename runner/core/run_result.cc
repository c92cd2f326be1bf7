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

// A present, non-null member; nullopt otherwise. The parent must be an object.
std::optional<JsonNode> field(const JsonNode& object, std::string_view key) {
  if (!object.value().contains(key) || object.value()[key].is_null()) return std::nullopt;
  return object.child(key);
}

JsonNode object_at(const JsonNode& node) {
  node.expect(node.value().is_object(), "an object");
  return node;
}

JsonNode required(const JsonNode& object, std::string_view key, const std::string& problem = "missing required field") {
  const auto node = field(object, key);
  if (!node) object.absent(key).fail(problem);
  return *node;
}

std::string text(const JsonNode& object, std::string_view key) {
  const auto node = field(object, key);
  return node ? node->string() : "";
}

std::vector<std::string> texts(const JsonNode& object, std::string_view key) {
  const auto node = field(object, key);
  return node ? node->strings() : std::vector<std::string>{};
}

nlohmann::json open_object(const JsonNode& object, std::string_view key) {
  const auto node = field(object, key);
  return node ? object_at(*node).value() : nlohmann::json::object();
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

Target read_target(const JsonNode& root) {
  const JsonNode t = object_at(required(root, "target"));
  Target target;
  target.file = required(t, "file").non_empty_string();
  target.function = required(t, "function").non_empty_string();
  target.signature = text(t, "signature");
  if (const auto n = field(t, "line_begin")) target.line_begin = n->integer<std::size_t>(0);
  if (const auto n = field(t, "line_end")) target.line_end = n->integer<std::size_t>(0);
  target.unit = texts(t, "unit");
  target.unit_notes = texts(t, "unit_notes");
  return target;
}

ResultRepository read_repository(const JsonNode& root) {
  ResultRepository repository;
  if (const auto node = field(root, "repository")) {
    const JsonNode r = object_at(*node);
    repository.path = text(r, "path");
    repository.commit = text(r, "commit");
    repository.local_changes = texts(r, "local_changes");
  }
  return repository;
}

ResultCandidate read_candidate(const JsonNode& node) {
  ResultCandidate c;
  c.evaluation = read_part(node, evaluation_from_json);
  if (const auto n = field(node, "step")) c.step = n->integer<int>(0);
  c.origin = text(node, "origin");
  c.knobs = open_object(node, "knobs");
  c.note = text(node, "note");
  return c;
}

ResultWinner read_winner(const JsonNode& node) {
  const JsonNode w = object_at(node);
  ResultWinner winner;
  winner.id = required(w, "id").non_empty_string();
  winner.confirmed = read_part(
      required(w, "confirmation", "missing required field (the confirmation session's timing)"), timing_from_json);
  if (const auto n = field(w, "search_speedup")) winner.search_speedup = read_part(*n, interval_from_json);
  winner.gpu = open_object(w, "gpu");
  if (const auto n = field(w, "precision")) {
    n->expect(n->value().is_array(), "an array");
    for (std::size_t i = 0; i < n->value().size(); ++i)
      winner.precision.push_back(read_part(n->element(i), output_error_from_json));
  }
  winner.call_check = text(w, "call_check");
  if (const auto n = field(w, "witness")) winner.witness = read_part(*n, witness_record_from_json);
  winner.tests = open_object(w, "tests");
  return winner;
}

template <class Read>
auto read_array(const JsonNode& root, std::string_view key, Read read) {
  std::vector<decltype(read(root))> out;
  if (const auto n = field(root, key)) {
    n->expect(n->value().is_array(), "an array");
    for (std::size_t i = 0; i < n->value().size(); ++i) out.push_back(read(n->element(i)));
  }
  return out;
}

std::optional<std::string> optional_text(const JsonNode& root, std::string_view key) {
  const auto n = field(root, key);
  return n ? std::optional(n->string()) : std::nullopt;
}

}  // namespace

RunResult run_result_from_json(const nlohmann::json& j, const std::string& label) {
  const JsonNode root(j, label, raise);
  object_at(root);
  const JsonNode schema = required(root, "schema", std::string("missing; this maxcode reads ") + kResultSchema);
  if (const std::string s = schema.string(); s != kResultSchema)
    schema.fail("'" + s + "', this maxcode reads " + kResultSchema);
  RunResult r;
  r.command = text(root, "command");
  r.repository = read_repository(root);
  r.target = read_target(root);
  r.policy = text(root, "policy");
  r.environment = open_object(root, "environment");
  r.settings = open_object(root, "settings");
  if (const auto n = field(root, "noise")) r.noise = read_part(*n, timing_from_json);
  r.candidates = read_array(root, "candidates", read_candidate);
  if (const auto n = field(root, "winner")) r.winner = read_winner(*n);
  r.unconfirmed = optional_text(root, "unconfirmed");
  r.fatal = optional_text(root, "fatal");
  r.stop_reason = text(root, "stop_reason");
  if (const auto n = field(root, "evaluations")) r.evaluations = n->integer<int>(0);
  r.warnings = texts(root, "warnings");
  r.audit = read_array(root, "audit", [](const JsonNode& n) { return read_part(n, benchmark_audit_from_json); });
  r.started_at = text(root, "started_at");
  if (const auto n = field(root, "wall_s")) r.wall_s = n->number(kNonNegative);
  if (const auto n = field(root, "spend")) r.spend = object_at(*n).value();
  if (const auto n = field(root, "gpu")) r.gpu = object_at(*n).value();
  r.tests = open_object(root, "tests");
  return r;
}

}  // namespace maxcode
