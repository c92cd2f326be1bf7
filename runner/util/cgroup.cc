#include "runner/util/cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

namespace maxcode {
namespace {

// ---------------------------------------------------------------- small file helpers

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool write_text(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// The number after `key` in a "key value" file (memory.events, pids.events, cpu.stat,
// memory.oom_control); -1 when absent.
long long keyed_value(const std::string& path, const std::string& key) {
  std::istringstream in(read_text(path));
  std::string name;
  long long value = 0;
  while (in >> name >> value) {
    if (name == key) return value;
  }
  return -1;
}

long long plain_value(const std::string& path) {
  std::string text = read_text(path);
  if (text.empty()) return -1;
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    return -1;
  }
}

std::set<std::string> words(const std::string& text, char separator) {
  std::set<std::string> out;
  std::string word;
  std::istringstream in(text);
  while (std::getline(in, word, separator)) {
    while (!word.empty() && (word.back() == '\n' || word.back() == ' ')) word.pop_back();
    if (!word.empty()) out.insert(word);
  }
  return out;
}

std::string mib(std::uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// ---------------------------------------------------------------- where groups go

// This process's own group in one hierarchy, as a directory.
struct Hierarchy {
  std::string own;
  bool v2 = false;
};

struct Layout {
  std::optional<Hierarchy> memory, pids, cpu;  // where each role's groups are made
  std::optional<Hierarchy> v2;                 // the unified hierarchy, when usable (cgroup.kill)
  CgroupSupport support;
};

struct Mount {
  std::string root, point, type;
  std::set<std::string> options;
};

std::vector<Mount> cgroup_mounts() {
  std::vector<Mount> mounts;
  std::istringstream in(read_text("/proc/self/mountinfo"));
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream left(line.substr(0, dash)), right(line.substr(dash + 3));
    std::string id, parent, device;
    Mount m;
    std::string source, super;
    left >> id >> parent >> device >> m.root >> m.point;
    right >> m.type >> source >> super;
    if (m.type != "cgroup" && m.type != "cgroup2") continue;
    m.options = words(super, ',');
    mounts.push_back(std::move(m));
  }
  return mounts;
}

// The directory of `path` (a group, as /proc/self/cgroup names it) under `mount`.
std::optional<std::string> group_dir(const Mount& mount, const std::string& path) {
  if (mount.root == "/") return mount.point + (path == "/" ? "" : path);
  if (path.compare(0, mount.root.size(), mount.root) != 0) return std::nullopt;  // outside what is mounted
  return mount.point + path.substr(mount.root.size());
}

// Whether a child process can make a group under `own`, join it and leave it again:
// the one test that holds whatever the permissions and the kind of machine.
bool can_join_under(const std::string& own, const std::vector<std::string>& files) {
  const std::string probe = own + "/maxcode-probe-" + std::to_string(getpid());
  if (mkdir(probe.c_str(), 0755) != 0 && errno != EEXIST) return false;
  bool ok = true;
  for (const auto& file : files) ok = ok && exists(probe + "/" + file);
  if (ok) {
    int fd = open((probe + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    ok = fd >= 0;
    if (ok) {
      pid_t pid = fork();
      if (pid == 0) _exit(write(fd, "0", 1) == 1 ? 0 : 1);
      int status = 0;
      ok = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
      close(fd);
    }
  }
  // The probe's process has exited; its group may take a moment to be empty.
  for (int attempt = 0; attempt < 100 && rmdir(probe.c_str()) != 0 && errno == EBUSY; ++attempt)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return ok;
}

// Enables `wanted` controllers for the children of the v2 group `own`. Where the group
// holds this process alone (a container's root group), this process moves into a leaf
// first: the kernel enables no controller for the children of a group with processes.
std::set<std::string> enable_v2(const std::string& own, const std::set<std::string>& wanted) {
  std::set<std::string> offered = words(read_text(own + "/cgroup.controllers"), ' ');
  std::set<std::string> enabled = words(read_text(own + "/cgroup.subtree_control"), ' ');
  std::set<std::string> result;
  bool moved = false;
  for (const auto& controller : wanted) {
    if (!offered.count(controller)) continue;
    if (enabled.count(controller)) {
      result.insert(controller);
      continue;
    }
    const std::string path = own + "/cgroup.subtree_control";
    if (write_text(path, "+" + controller)) {
      result.insert(controller);
      continue;
    }
    if (errno != EBUSY || moved) continue;
    const std::set<std::string> procs = words(read_text(own + "/cgroup.procs"), '\n');
    if (procs != std::set<std::string>{std::to_string(getpid())}) continue;  // others live there too
    const std::string leaf = own + "/maxcode-" + std::to_string(getpid());
    if (mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) continue;
    if (!write_text(leaf + "/cgroup.procs", "0")) continue;
    moved = true;
    if (write_text(path, "+" + controller)) result.insert(controller);
  }
  return result;
}

// The hierarchies this process is in, from /proc/self/cgroup and the mounts: the v2
// one, and each v1 controller's.
struct Hierarchies {
  std::optional<Hierarchy> v2;
  std::map<std::string, Hierarchy> v1;  // controller -> its hierarchy
};

Hierarchies own_hierarchies() {
  Hierarchies found;
  const std::vector<Mount> mounts = cgroup_mounts();
  std::istringstream in(read_text("/proc/self/cgroup"));
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    for (const Mount& mount : mounts) {
      if (controllers.empty() && line.compare(0, first, "0") == 0 && mount.type == "cgroup2") {
        if (auto dir = group_dir(mount, path)) found.v2 = Hierarchy{*dir, true};
        break;
      }
      const std::set<std::string> names = words(controllers, ',');
      if (mount.type != "cgroup" || names.empty()) continue;
      bool all = true;
      for (const auto& name : names) all = all && mount.options.count(name);
      if (!all) continue;
      if (auto dir = group_dir(mount, path)) {
        for (const auto& name : names) found.v1.emplace(name, Hierarchy{*dir, false});
      }
      break;
    }
  }
  return found;
}

// What the layout holds and what it leaves to rlimits, for people (CgroupSupport::summary).
std::string support_summary(const Layout& layout, const Hierarchies& found, const std::string& v2_note) {
  std::vector<std::string> held, unheld;
  auto version = [](const std::optional<Hierarchy>& h) { return std::string(h->v2 ? " (cgroup v2)" : " (cgroup v1)"); };
  if (layout.memory)
    held.push_back("memory" + version(layout.memory));
  else
    unheld.push_back("memory each process on its own (RLIMIT_DATA)");
  if (layout.pids)
    held.push_back("processes" + version(layout.pids));
  else
    unheld.push_back("processes per user (RLIMIT_NPROC)");
  if (layout.cpu)
    held.push_back("CPU time" + version(layout.cpu));
  else
    unheld.push_back("CPU time by the step's timeout alone");
  auto join = [](const std::vector<std::string>& items) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
    return out;
  };
  std::string summary;
  if (!held.empty()) summary = "all of a command's processes together: " + join(held);
  if (!unheld.empty()) {
    if (!summary.empty()) summary += "; ";
    summary += "no usable cgroup for the rest, held as: " + join(unheld);
    if (!v2_note.empty())
      summary += " (" + v2_note + ")";
    else if (!found.v2 && found.v1.empty())
      summary += " (no cgroup hierarchy is mounted here)";
  }
  return summary;
}

Layout discover() {
  Layout layout;
  const Hierarchies found = own_hierarchies();
  const std::optional<Hierarchy>& v2 = found.v2;
  std::string v2_note;
  if (v2 && can_join_under(v2->own, {"cgroup.procs"})) {
    layout.v2 = v2;
    const std::set<std::string> enabled = enable_v2(v2->own, {"memory", "pids"});
    if (enabled.count("memory") && can_join_under(v2->own, {"memory.max", "memory.events"})) layout.memory = v2;
    if (enabled.count("pids") && can_join_under(v2->own, {"pids.max", "pids.events"})) layout.pids = v2;
    // usage_usec is the core's own accounting: every v2 group has cpu.stat.
    if (can_join_under(v2->own, {"cpu.stat"})) layout.cpu = v2;
  } else if (v2) {
    v2_note = "cgroup v2 at " + v2->own + " is not writable here";
  }
  auto from_v1 = [&](std::optional<Hierarchy>& role, const std::string& controller,
                     const std::vector<std::string>& files) {
    if (role || !found.v1.count(controller)) return;
    if (can_join_under(found.v1.at(controller).own, files)) role = found.v1.at(controller);
  };
  from_v1(layout.memory, "memory", {"memory.limit_in_bytes", "memory.oom_control"});
  from_v1(layout.pids, "pids", {"pids.max", "pids.events"});
  from_v1(layout.cpu, "cpuacct", {"cpuacct.usage"});
  layout.support.memory = layout.memory.has_value();
  layout.support.processes = layout.pids.has_value();
  layout.support.cpu = layout.cpu.has_value();
  layout.support.summary = support_summary(layout, found, v2_note);
  return layout;
}

const Layout& layout() {
  static std::once_flag once;
  static Layout found;
  std::call_once(once, [] {
    found = discover();
    // Said once, never silently: limits a user set are weaker than they read.
    if (!found.support.memory || !found.support.processes || !found.support.cpu)
      std::fprintf(stderr, "maxcode: note: command limits: %s\n", found.support.summary.c_str());
  });
  return found;
}

std::atomic<unsigned long> next_group{0};

}  // namespace

const CgroupSupport& cgroup_support() { return layout().support; }

CommandGroup::CommandGroup(const GroupLimits& limits) : limits_(limits) {
  if (limits.memory_bytes == 0 && limits.processes <= 0 && limits.cpu_s <= 0) return;
  const Layout& l = layout();
  const std::string name = "/maxcode-cmd-" + std::to_string(getpid()) + "-" + std::to_string(next_group++);
  // One directory per hierarchy used: the roles asked for, and v2 (cgroup.kill) always.
  auto dir_for = [&](const Hierarchy& h) -> int {
    const std::string path = h.own + name;
    for (std::size_t i = 0; i < dirs_.size(); ++i) {
      if (dirs_[i].path == path) return static_cast<int>(i);
    }
    if (mkdir(path.c_str(), 0755) != 0) return -1;
    int fd = open((path + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      rmdir(path.c_str());
      return -1;
    }
    dirs_.push_back({path, h.v2});
    join_fds_.push_back(fd);
    return static_cast<int>(dirs_.size() - 1);
  };
  if (limits.memory_bytes > 0 && l.memory) {
    const int i = dir_for(*l.memory);
    const std::string at = i >= 0 ? dirs_[i].path + "/" : "";
    const std::string bytes = std::to_string(limits.memory_bytes);
    if (i >= 0 && l.memory->v2 && write_text(at + "memory.max", bytes)) {
      write_text(at + "memory.swap.max", "0");  // absent without swap accounting
      write_text(at + "memory.oom.group", "1");  // one process killed for it kills them all
      memory_ = i;
    } else if (i >= 0 && !l.memory->v2 && write_text(at + "memory.limit_in_bytes", bytes)) {
      write_text(at + "memory.memsw.limit_in_bytes", bytes);  // and no swap beyond it, where counted
      memory_ = i;
    }
  }
  if (limits.processes > 0 && l.pids) {
    const int i = dir_for(*l.pids);
    if (i >= 0 && write_text(dirs_[i].path + "/pids.max", std::to_string(limits.processes))) pids_ = i;
  }
  if (l.cpu && limits.cpu_s > 0) cpu_ = dir_for(*l.cpu);
  // v2 for cgroup.kill, and for reading the CPU time where it is v2's (no extra group).
  if (l.v2 && active()) {
    const int i = dir_for(*l.v2);
    if (cpu_ < 0 && l.cpu && l.cpu->v2) cpu_ = i;
  }
}

CommandGroup::~CommandGroup() {
  for (int fd : join_fds_) close(fd);
  // A group can be removed once its last process is gone, a moment after the kill.
  std::vector<bool> removed(dirs_.size(), false);
  for (int attempt = 0; attempt < 300; ++attempt) {
    bool all = true;
    for (std::size_t i = 0; i < dirs_.size(); ++i) {
      if (!removed[i]) removed[i] = rmdir(dirs_[i].path.c_str()) == 0 || errno == ENOENT;
      all = all && removed[i];
    }
    if (all) return;
    kill_all();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (std::size_t i = 0; i < dirs_.size(); ++i) {
    if (!removed[i]) std::fprintf(stderr, "maxcode: warning: could not remove cgroup %s\n", dirs_[i].path.c_str());
  }
}

GroupLimit CommandGroup::hit() const {
  if (memory_ >= 0) {
    const Dir& d = dirs_[memory_];
    const long long killed = d.v2 ? keyed_value(d.path + "/memory.events", "oom_kill")
                                  : keyed_value(d.path + "/memory.oom_control", "oom_kill");
    if (killed > 0) return GroupLimit::kMemory;
    if (!d.v2 && keyed_value(d.path + "/memory.oom_control", "under_oom") > 0) return GroupLimit::kMemory;
  }
  if (limits_.cpu_s > 0 && cpu_ >= 0 && cpu_s() > limits_.cpu_s) return GroupLimit::kCpu;
  return GroupLimit::kNone;
}

bool CommandGroup::processes_refused() const {
  return pids_ >= 0 && keyed_value(dirs_[pids_].path + "/pids.events", "max") > 0;
}

std::uint64_t CommandGroup::memory_peak_bytes() const {
  if (memory_ < 0) return 0;
  const Dir& d = dirs_[memory_];
  const long long peak = plain_value(d.path + (d.v2 ? "/memory.peak" : "/memory.max_usage_in_bytes"));
  return peak > 0 ? static_cast<std::uint64_t>(peak) : 0;
}

double CommandGroup::cpu_s() const {
  if (cpu_ < 0) return -1;
  const Dir& d = dirs_[cpu_];
  if (d.v2) {
    const long long usec = keyed_value(d.path + "/cpu.stat", "usage_usec");
    return usec < 0 ? -1 : static_cast<double>(usec) / 1e6;
  }
  const long long ns = plain_value(d.path + "/cpuacct.usage");
  return ns < 0 ? -1 : static_cast<double>(ns) / 1e9;
}

void CommandGroup::kill_all() const {
  for (const Dir& d : dirs_) {
    if (d.v2 && write_text(d.path + "/cgroup.kill", "1")) return;  // every process, at once
  }
  // v1: one by one, until none is left (a fork between the read and the kill lands in
  // the group too, and is found on the next round).
  for (int round = 0; round < 20; ++round) {
    bool any = false;
    for (const Dir& d : dirs_) {
      for (const auto& pid : words(read_text(d.path + "/cgroup.procs"), '\n')) {
        const long n = std::strtol(pid.c_str(), nullptr, 10);
        if (n > 0 && n != getpid()) {
          kill(static_cast<pid_t>(n), SIGKILL);
          any = true;
        }
      }
    }
    if (!any) return;
  }
}

std::vector<std::string> CommandGroup::paths() const {
  std::vector<std::string> out;
  for (const Dir& d : dirs_) out.push_back(d.path);
  return out;
}

std::string describe_group_limit(GroupLimit limit, const GroupLimits& limits) {
  switch (limit) {
    case GroupLimit::kMemory:
      return "its processes used more than " + mib(limits.memory_bytes) + " of memory together";
    case GroupLimit::kProcesses:
      return "its processes reached " + std::to_string(limits.processes) +
             " at once, and a fork past that was refused";
    case GroupLimit::kCpu: {
      char text[128];
      std::snprintf(text, sizeof text, "its processes used more than %.1f s of CPU time together", limits.cpu_s);
      return text;
    }
    case GroupLimit::kNone:
      break;
  }
  return "";
}

}  // namespace maxcode
