#include "runner/profile/profile.h"

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
  }
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

}  // namespace

nlohmann::json to_json(const Profile& p) {
  nlohmann::json entries = nlohmann::json::array();
  for (std::size_t i = 0; i < p.entries.size(); ++i) entries.push_back(entry_json(p.entries[i], static_cast<int>(i) + 1));
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : p.runs) runs.push_back(run_json(r));
  return {{"format", "maxcode-profile/1"},
          {"repository", p.repository},
          {"commit", p.commit},
          {"unit", p.unit},
          {"cpu_total", p.cpu_total},
          {"gpu_total", p.gpu_total},
          {"benchmarks", runs},
          {"warnings", p.warnings},
          {"entries", entries}};
}

}  // namespace maxcode
