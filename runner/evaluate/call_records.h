// What the call shim (runner/workspace/call_shim.h) wrote during one benchmark run:
// one record per call of the target, read back from calls.txt and out-*.bin.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace maxcode {

struct CallArg {
  std::string name;
  bool input = false;       // const T*: read by the target; else written
  std::string pointer;      // as printed (%p)
  std::uint64_t count = 0;  // elements
  std::string entry_hash;   // contents when the call began (after any perturbation/poison)
  std::string exit_hash;    // contents when it returned
};

struct CallOutput {
  std::string name;
  std::string type;         // element type, "float"
  std::uint64_t kept = 0;   // elements in the file
  std::uint64_t stride = 1; // every stride-th element from offset
  std::uint64_t offset = 0;
  std::filesystem::path file;
};

// How far the call wrote past an unsized output (the original's discovering run).
struct CallExtent {
  std::string name;
  std::uint64_t bytes = 0;
};

struct CallRecord {
  long call = 0;
  double seconds = 0;         // the target's own time (the shim's clock, inside the run)
  double overhead_s = 0;      // the shim's work around it: perturbing, hashing, recording
  double cpu_s = -1;          // CPU time of the process (and its reaped children) over the call; -1: not recorded
  std::vector<CallArg> args;
  std::vector<CallOutput> outputs;  // every output recorded for this call
  std::vector<CallExtent> extents;
  // A probe (shim_runtime.cc): the target called once more right before this call, on
  // its inputs changed a little. Its time is neither this call's nor the shim's.
  bool probed = false;
  double probe_s = 0;
  double probe_gap_s = 0;     // from the probe's return to this call's start
};

// Throws std::runtime_error naming the file and line of anything it cannot read. A
// directory without calls.txt means the target was never called: an empty list. Calls
// made from several threads may be written out of order: the list is by call number,
// and a number missing or given twice is an error. `root` (default: `dir` itself) is the
// directory the run could write, its workspace: calls.txt is read beneath it, never
// through a link (util/beneath.h); a calls.txt that is not a regular file there, or is
// too large, throws the BeneathError that says so.
std::vector<CallRecord> read_call_records(const std::filesystem::path& dir, const std::filesystem::path& root = {});

// Each call's work: the shorter of its wall time and its CPU time, so that a call that
// was descheduled on a busy machine does not look like a call that did more work (the
// per-call time check, runner/evaluate/call_consistency.h). A call that waits for work
// done elsewhere keeps its short CPU time; what it computed is still compared.
std::vector<double> call_work_seconds(const std::vector<CallRecord>& records);
// The shim's own time in one run, summed over its calls.
double shim_overhead_s(const std::vector<CallRecord>& records);

}  // namespace maxcode
