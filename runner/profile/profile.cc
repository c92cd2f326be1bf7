#include "runner/profile/profile.h"

#include <stdexcept>
#include <string_view>

#include "runner/util/json_reader.h"

namespace maxcode {

namespace {

nlohmann::json entry_json(const ProfileEntry& e, int rank) {
  nlohmann::json lines = nlohmann::json::array();
  for (const auto& l : e.lines) lines.push_back({{"file", l.file}, {"line", l.line}, {"share", l.share}});
  nlohmann::json j = {{"rank", rank},         {"kind", e.kind},         {"name", e.name},
                      {"function", e.function}, {"symbol", e.symbol},   {"module", e.module},
                      {"file", e.file},         {"line", e.line},       {"self", e.self},
                      {"total", e.total},       {"share", e.share},     {"calls", e.calls},
                      {"samples", e.samples},   {"external", e.external}, {"in_scope", e.in_scope},
                      {"lines", lines}};
  if (e.kind == "gpu") {
    GpuSummary shapes;
    shapes.kernels = e.shapes;
    j["shapes"] = to_json(shapes)["kernels"];
    nlohmann::json launchers = nlohmann::json::array();
    for (const KernelLauncher& l : e.launchers)
      launchers.push_back({{"function", l.function}, {"signature", l.signature}, {"file", l.file}, {"line", l.line}});
    j["launchers"] = launchers;
    j["launch_note"] = e.launch_note;
  }
  if (!e.benchmark_entries.empty()) j["benchmark_entries"] = e.benchmark_entries;
  return j;
}

nlohmann::json run_json(const BenchmarkRun& r) {
  return {{"name", r.name},
          {"command", r.command},
          {"outcome", r.outcome},
          {"output_tail", r.output_tail},
          {"wall_s", r.wall_s},
          {"cpu_s", r.cpu_s},
          {"gpu_kernel_s", r.gpu_kernel_s},
          {"gpu_transfer_s", r.gpu_transfer_s},
          {"gpu_busy_s", r.gpu_busy_s},
          {"gpu_window_s", r.gpu_window_s},
          {"gpu_busy_share", r.wall_s > 0 ? r.gpu_busy_s / r.wall_s : 0.0},
          {"kernel_launches", r.kernel_launches},
          {"bound", r.bound},
          {"bound_reason", r.bound_reason},
          {"processes", r.processes},
          {"gpu_processes", r.gpu_processes},
          {"samples", r.samples},
          {"dropped", r.dropped},
          {"gpu_dropped", r.gpu_dropped},
          {"partial", r.partial}};
}

nlohmann::json list_json(const std::vector<ProfileEntry>& list) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < list.size(); ++i) out.push_back(entry_json(list[i], static_cast<int>(i) + 1));
  return out;
}

// Reading back: an open object (fields of other versions are allowed, and absent or null
// ones keep their defaults), each field checked for its type by the strict reader, so
// that a profile someone edited gets an error naming the file and the field.
std::map<std::string, std::vector<std::string>> entries_of(const JsonObject& e) {
  std::map<std::string, std::vector<std::string>> out;
  if (const auto node = e.get("benchmark_entries"))
    for (const auto& [name, value] : JsonObject::open(*node).members()) out[name] = value.strings();
  return out;
}

ProfileEntry entry_from_json(const JsonNode& node) {
  const JsonObject f = JsonObject::open(node);
  ProfileEntry e;
  e.kind = f.string("kind", "cpu");
  if (e.kind != "cpu" && e.kind != "gpu") f.fail("kind", "expected \"cpu\" or \"gpu\"");
  e.name = f.string("name");
  e.function = f.string("function");
  e.symbol = f.string("symbol");
  e.module = f.string("module");
  e.file = f.string("file");
  e.line = f.integer<int>("line", 0, 0);
  e.self = f.number("self", 0);
  e.total = f.number("total", 0);
  e.share = f.number("share", 0);
  e.calls = f.integer<std::uint64_t>("calls", 0, 0);
  e.samples = f.integer<std::uint64_t>("samples", 0, 0);
  e.external = f.boolean("external", false);
  e.in_scope = f.boolean("in_scope", false);
  for (const JsonNode& line : f.elements("lines")) {
    const JsonObject l = JsonObject::open(line);
    e.lines.push_back({l.string("file"), l.integer<int>("line", 0, 0), l.number("share", 0)});
  }
  for (const JsonNode& launcher : f.elements("launchers")) {
    const JsonObject l = JsonObject::open(launcher);
    e.launchers.push_back(
        {l.string("function"), l.string("signature"), l.string("file"), l.integer<int>("line", 0, 0)});
  }
  e.launch_note = f.string("launch_note");
  e.benchmark_entries = entries_of(f);
  return e;
}

std::vector<ProfileEntry> list_from_json(const JsonObject& f, std::string_view name) {
  std::vector<ProfileEntry> out;
  for (const JsonNode& entry : f.elements(name)) out.push_back(entry_from_json(entry));
  return out;
}

BenchmarkRun run_from_json(const JsonNode& node) {
  const JsonObject r = JsonObject::open(node);
  BenchmarkRun run;
  run.name = r.string("name");
  run.command = r.string("command");
  run.outcome = r.string("outcome", "ok");
  run.output_tail = r.string("output_tail");
  run.wall_s = r.number("wall_s", 0);
  run.cpu_s = r.number("cpu_s", 0);
  run.gpu_kernel_s = r.number("gpu_kernel_s", 0);
  run.gpu_transfer_s = r.number("gpu_transfer_s", 0);
  run.gpu_busy_s = r.number("gpu_busy_s", 0);
  run.gpu_window_s = r.number("gpu_window_s", 0);
  run.kernel_launches = r.integer<std::uint64_t>("kernel_launches", 0, 0);
  run.bound = r.string("bound");
  run.bound_reason = r.string("bound_reason");
  run.processes = r.integer<int>("processes", 0, 0);
  run.gpu_processes = r.integer<int>("gpu_processes", 0, 0);
  run.samples = r.integer<std::uint64_t>("samples", 0, 0);
  run.dropped = r.integer<std::uint64_t>("dropped", 0, 0);
  run.gpu_dropped = r.integer<std::uint64_t>("gpu_dropped", 0, 0);
  run.partial = r.boolean("partial", false);
  return run;
}

}  // namespace

nlohmann::json to_json(const Profile& p) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : p.runs) runs.push_back(run_json(r));
  return {{"format", kProfileFormat},
          {"repository", p.repository},
          {"commit", p.commit},
          {"unit", p.unit},
          {"cpu_total", p.cpu_total},
          {"gpu_total", p.gpu_total},
          {"benchmarks", runs},
          {"warnings", p.warnings},
          {"kernels", list_json(p.kernels)},
          {"functions", list_json(p.functions)}};
}

Profile profile_from_json(const nlohmann::json& document, const std::string& label) {
  const JsonObject f = JsonObject::open(JsonNode(document, label, raise_as<std::runtime_error>));
  const std::string format = f.string("format");
  if (format != kProfileFormat && format != "maxcode-profile/1")
    throw std::runtime_error(label + ": format " + (format.empty() ? "missing" : "'" + format + "'") +
                             " is not a profile this maxcode reads (it reads " + kProfileFormat +
                             " and maxcode-profile/1); write it again with this version's maxcode profile");
  Profile p;
  p.repository = f.string("repository");
  p.commit = f.string("commit");
  p.unit = f.string("unit", "ns");
  p.cpu_total = f.number("cpu_total", 0);
  p.gpu_total = f.number("gpu_total", 0);
  p.warnings = f.strings("warnings", {});
  for (const JsonNode& run : f.elements("benchmarks")) p.runs.push_back(run_from_json(run));
  if (format == kProfileFormat) {
    p.kernels = list_from_json(f, "kernels");
    p.functions = list_from_json(f, "functions");
  } else {
    // One list with shares of CPU + GPU time: split by kind, each share over its own total.
    for (ProfileEntry& e : list_from_json(f, "entries")) {
      const double total = e.kind == "gpu" ? p.gpu_total : p.cpu_total;
      e.share = total > 0 ? e.self / total : 0;
      (e.kind == "gpu" ? p.kernels : p.functions).push_back(std::move(e));
    }
  }
  return p;
}

}  // namespace maxcode
