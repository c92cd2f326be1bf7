#include "runner/profile/profile.h"

#include <stdexcept>

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

// Reading back: each field checked for its type, the path named when it is wrong.
class Fields {
 public:
  Fields(const nlohmann::json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) throw std::runtime_error(path_ + ": expected an object");
  }
  template <typename T>
  T get(const char* name, T fallback) const {
    auto it = j_.find(name);
    if (it == j_.end() || it->is_null()) return fallback;
    try {
      return it->get<T>();
    } catch (const nlohmann::json::exception&) {
      throw std::runtime_error(path_ + "." + name + ": wrong type (" + it->type_name() + ")");
    }
  }
  const nlohmann::json* array(const char* name) const {
    auto it = j_.find(name);
    if (it == j_.end() || it->is_null()) return nullptr;
    if (!it->is_array()) throw std::runtime_error(path_ + "." + name + ": expected an array");
    return &*it;
  }
  const std::string& path() const { return path_; }

 private:
  const nlohmann::json& j_;
  std::string path_;
};

ProfileEntry entry_from_json(const nlohmann::json& j, const std::string& path) {
  Fields f(j, path);
  ProfileEntry e;
  e.kind = f.get<std::string>("kind", "cpu");
  if (e.kind != "cpu" && e.kind != "gpu") throw std::runtime_error(path + ".kind: expected \"cpu\" or \"gpu\"");
  e.name = f.get<std::string>("name", "");
  e.function = f.get<std::string>("function", "");
  e.symbol = f.get<std::string>("symbol", "");
  e.module = f.get<std::string>("module", "");
  e.file = f.get<std::string>("file", "");
  e.line = f.get<int>("line", 0);
  e.self = f.get<double>("self", 0);
  e.total = f.get<double>("total", 0);
  e.share = f.get<double>("share", 0);
  e.calls = f.get<std::uint64_t>("calls", 0);
  e.samples = f.get<std::uint64_t>("samples", 0);
  e.external = f.get<bool>("external", false);
  e.in_scope = f.get<bool>("in_scope", false);
  if (const auto* lines = f.array("lines")) {
    for (std::size_t i = 0; i < lines->size(); ++i) {
      Fields l((*lines)[i], path + ".lines[" + std::to_string(i) + "]");
      e.lines.push_back({l.get<std::string>("file", ""), l.get<int>("line", 0), l.get<double>("share", 0)});
    }
  }
  if (const auto* launchers = f.array("launchers")) {
    for (std::size_t i = 0; i < launchers->size(); ++i) {
      Fields l((*launchers)[i], path + ".launchers[" + std::to_string(i) + "]");
      e.launchers.push_back({l.get<std::string>("function", ""), l.get<std::string>("signature", ""),
                             l.get<std::string>("file", ""), l.get<int>("line", 0)});
    }
  }
  e.launch_note = f.get<std::string>("launch_note", "");
  e.benchmark_entries = f.get<std::map<std::string, std::vector<std::string>>>("benchmark_entries", {});
  return e;
}

std::vector<ProfileEntry> list_from_json(const Fields& f, const char* name) {
  std::vector<ProfileEntry> out;
  if (const auto* list = f.array(name))
    for (std::size_t i = 0; i < list->size(); ++i)
      out.push_back(entry_from_json((*list)[i], f.path() + "." + name + "[" + std::to_string(i) + "]"));
  return out;
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
  Fields f(document, label);
  const std::string format = f.get<std::string>("format", "");
  if (format != kProfileFormat && format != "maxcode-profile/1")
    throw std::runtime_error(label + ": format " + (format.empty() ? "missing" : "'" + format + "'") +
                             " is not a profile this maxcode reads (it reads " + kProfileFormat +
                             " and maxcode-profile/1); write it again with this version's maxcode profile");
  Profile p;
  p.repository = f.get<std::string>("repository", "");
  p.commit = f.get<std::string>("commit", "");
  p.unit = f.get<std::string>("unit", "ns");
  p.cpu_total = f.get<double>("cpu_total", 0);
  p.gpu_total = f.get<double>("gpu_total", 0);
  p.warnings = f.get<std::vector<std::string>>("warnings", {});
  if (const auto* runs = f.array("benchmarks")) {
    for (std::size_t i = 0; i < runs->size(); ++i) {
      Fields r((*runs)[i], label + ".benchmarks[" + std::to_string(i) + "]");
      BenchmarkRun run;
      run.name = r.get<std::string>("name", "");
      run.command = r.get<std::string>("command", "");
      run.outcome = r.get<std::string>("outcome", "ok");
      run.output_tail = r.get<std::string>("output_tail", "");
      run.wall_s = r.get<double>("wall_s", 0);
      run.cpu_s = r.get<double>("cpu_s", 0);
      run.gpu_kernel_s = r.get<double>("gpu_kernel_s", 0);
      run.gpu_transfer_s = r.get<double>("gpu_transfer_s", 0);
      run.gpu_busy_s = r.get<double>("gpu_busy_s", 0);
      run.gpu_window_s = r.get<double>("gpu_window_s", 0);
      run.kernel_launches = r.get<std::uint64_t>("kernel_launches", 0);
      run.bound = r.get<std::string>("bound", "");
      run.bound_reason = r.get<std::string>("bound_reason", "");
      run.processes = r.get<int>("processes", 0);
      run.gpu_processes = r.get<int>("gpu_processes", 0);
      run.samples = r.get<std::uint64_t>("samples", 0);
      run.dropped = r.get<std::uint64_t>("dropped", 0);
      run.gpu_dropped = r.get<std::uint64_t>("gpu_dropped", 0);
      run.partial = r.get<bool>("partial", false);
      p.runs.push_back(std::move(run));
    }
  }
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
