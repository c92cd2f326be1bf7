#include "runner/evaluate/gpu/launch_audit.h"

#include <algorithm>
#include <map>

namespace maxcode {

namespace {

struct Totals {
  std::uint64_t launches = 0;
  std::uint64_t recorded = 0;    // records matched to launches, at most the launches
  std::uint64_t unrecorded = 0;  // launches without a record, less the dropped records
  std::uint64_t contexts = 0;
  std::map<std::string, std::uint64_t> ipc;
  bool all_counted = true;
  const ProcessCalls* uncounted = nullptr;
  int incomplete = 0;
  const ProcessCalls* first_incomplete = nullptr;
};

// Snapshots of a process that never reached its exit lag behind its launches (kernels
// still running): only complete processes are matched.
Totals totals(const RunKernels& run) {
  Totals t;
  for (const ProcessCalls& p : run.calls) {
    if (!p.api.counted) {
      t.all_counted = false;
      if (!t.uncounted) t.uncounted = &p;
      continue;
    }
    t.contexts += p.api.contexts_created;
    for (const auto& [name, n] : p.api.ipc) t.ipc[name] += n;
    if (!p.complete) {
      if (!t.first_incomplete) t.first_incomplete = &p;
      ++t.incomplete;
      continue;
    }
    t.launches += p.api.launches;
    t.recorded += std::min(p.api.launch_records, p.api.launches);
    const std::uint64_t missing = p.api.unrecorded_launches();
    t.unrecorded += missing > p.dropped ? missing - p.dropped : 0;
  }
  return t;
}

}  // namespace

std::string check_launch_audit(const RunKernels& original, const RunKernels& candidate) {
  const Totals o = totals(original), c = totals(candidate);
  // Files of an injection without the counts, or a machine where CUPTI's callbacks are
  // taken by a tool: the original says what can be expected.
  if (original.calls.empty() || !o.all_counted) return {};
  if (!c.all_counted)
    return "kernel launches were not counted in process " + std::to_string(c.uncounted->pid) + " (" +
           (c.uncounted->exe.empty() ? "unknown program" : c.uncounted->exe) +
           "): CUPTI's callbacks were taken or finalized by the program (the original's launches were counted)";
  if (c.incomplete > o.incomplete)
    return "process " + std::to_string(c.first_incomplete->pid) + " (" +
           (c.first_incomplete->exe.empty() ? "unknown program" : c.first_incomplete->exe) +
           ") ended without its final GPU summary (its report to maxcode was cut off): its kernels are not all known";
  if (c.unrecorded > o.unrecorded)
    return "kernel activity records missing: " + std::to_string(c.launches) + " launches made, " +
           std::to_string(c.recorded) + " recorded (activity recording was switched off or records were lost)";
  std::string ipc;
  for (const auto& [name, n] : c.ipc) {
    auto before = o.ipc.find(name);
    if (n > (before == o.ipc.end() ? 0 : before->second))
      ipc += (ipc.empty() ? "" : ", ") + name + " x" + std::to_string(n);
  }
  if (!ipc.empty()) return "CUDA IPC used (" + ipc + "): work may run in another process outside the timer";
  if (c.contexts > o.contexts)
    return "created " + std::to_string(c.contexts) + " CUDA context(s) of its own, the original " +
           std::to_string(o.contexts) + " (cuCtxCreate, cuGreenCtxCreate): work may run outside the context the "
           "timer expects";
  return {};
}

}  // namespace maxcode
