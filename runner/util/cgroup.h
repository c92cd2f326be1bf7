// Limits on all of one command's processes together: a cgroup of its own per command.
//
// rlimits hold each process on its own (RLIMIT_DATA) or every process of a user
// (RLIMIT_NPROC): four processes of 100 MB each pass a 256 MB RLIMIT_DATA, and a
// candidate run by a user with other work shares that user's count (issue 22 point 5).
// A group made for the command, which its first process joins before exec (so that
// every descendant is in it, daemons and sandbox included), counts them together:
// memory (memory.max / memory.limit_in_bytes, swap off), processes (pids.max) and CPU
// time (cpu.stat usage_usec / cpuacct.usage, held by the supervisor's polling, since no
// controller caps a total). Afterwards what is left in the group is killed (cgroup.kill
// on v2) and the group removed.
//
// Where groups are made: under this process's own group of each hierarchy
// (/proc/self/cgroup), cgroup v2 (the unified hierarchy) for a controller it offers,
// else that controller's v1 hierarchy; a hybrid machine mixes them (v1 memory and pids,
// v2 for CPU time and cgroup.kill). On v2, controllers are enabled for the children of
// this process's group; where the group holds this process (a container's root), this
// process moves into a leaf of its own first, as the "no internal processes" rule asks.
// What cannot be made here (no writable cgroup, a controller missing) falls back to the
// rlimits, and cgroup_support() says so, once, on stderr too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace maxcode {

// What this machine lets maxcode hold with groups, found once per process.
struct CgroupSupport {
  bool memory = false;     // memory of all a command's processes together
  bool processes = false;  // processes (and threads) at once, of this command only
  bool cpu = false;        // CPU time of all of them, read while they run
  // One line for results and logs: how the limits are held here ("all of a command's
  // processes together: memory (cgroup v1), processes (cgroup v1), CPU time (cgroup v2)",
  // or which of them are held per process only, and why).
  std::string summary;
};
const CgroupSupport& cgroup_support();

struct GroupLimits {
  std::size_t memory_bytes = 0;  // 0 = none
  long processes = 0;            // 0 = none
  double cpu_s = 0;              // 0 = none
};

// Which limit a group's command ran into.
enum class GroupLimit { kNone, kMemory, kProcesses, kCpu };

// One command's group, from before its fork until after its end. Where the machine
// gives no group (or no limit is asked for), it is inactive and every call does nothing.
class CommandGroup {
 public:
  explicit CommandGroup(const GroupLimits& limits);
  ~CommandGroup();  // kill_all(), then the group's directories are removed
  CommandGroup(const CommandGroup&) = delete;
  CommandGroup& operator=(const CommandGroup&) = delete;

  bool active() const { return !dirs_.empty(); }
  // Which of the limits the group holds (the rest stays with the rlimits).
  bool holds_memory() const { return memory_ >= 0; }
  bool holds_processes() const { return pids_ >= 0; }
  bool holds_cpu() const { return cpu_ >= 0; }
  // Open descriptors of the group's cgroup.procs files, one per hierarchy: the child
  // writes "0" to each before exec (async-signal-safe), which moves it into the group.
  const std::vector<int>& join_fds() const { return join_fds_; }

  // The limit the command ran into so far, read from the kernel's counters: memory once
  // the kernel killed a process for it (oom_kill), processes once a fork was refused
  // (pids.events max), CPU time once the usage passed the limit. Cheap: a file or two.
  GroupLimit hit() const;
  // Whether a fork was refused at pids.max (the command may have coped).
  bool processes_refused() const;
  std::uint64_t memory_peak_bytes() const;  // 0 = unknown
  double cpu_s() const;                     // -1 = unknown
  // Kills every process in the group, however it left its process group or session.
  void kill_all() const;
  // The paths of the group's directories (tests: that they are gone afterwards).
  std::vector<std::string> paths() const;

 private:
  struct Dir {
    std::string path;
    bool v2 = false;
  };
  std::vector<Dir> dirs_;
  std::vector<int> join_fds_;
  int memory_ = -1, pids_ = -1, cpu_ = -1;  // index into dirs_ of each role, -1 = none
  GroupLimits limits_;
};

// Text a limit hit reads as, for Outcome::limit_exceeded: "its processes used more than
// 256 MiB of memory together".
std::string describe_group_limit(GroupLimit limit, const GroupLimits& limits);

}  // namespace maxcode
