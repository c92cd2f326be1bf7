#include "runner/util/process.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>

#include "runner/util/cgroup.h"
#include "runner/util/sandbox_view.h"
#include "runner/util/secrets.h"

extern char** environ;

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
// From <linux/mount.h>, which clashes with glibc's <sys/mount.h>.
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
struct MountAttr {
  std::uint64_t attr_set;
  std::uint64_t attr_clr;
  std::uint64_t propagation;
  std::uint64_t userns_fd;
};

// After the command ends (or we kill it), how long we keep reading for output still in
// flight. Bounded because a process that left our process group may hold the pipes.
constexpr auto kDrainGrace = std::chrono::milliseconds(200);
// Without a pidfd we learn about the child's exit by polling this often.
constexpr int kExitPollMs = 10;
// How often a command's cgroup is read for a limit it ran into (memory, CPU time): the
// kernel has already stopped the process at fault; this stops the rest soon after.
constexpr auto kGroupPoll = std::chrono::milliseconds(100);

// ---------------------------------------------------------------- small helpers

std::string errno_text(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}


// Resolved in the parent: exec'ing by PATH search in the child is not async-signal-safe.
// PATH is read here, as execvp would read it: it is the child's lookup, not configuration.
std::string find_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
  std::size_t begin = 0;
  while (begin <= dirs.size()) {
    std::size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(begin, end - begin);
    if (!dir.empty()) {
      std::string candidate = dir + "/" + name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    begin = end + 1;
  }
  return "";
}

// ---------------------------------------------------------------- isolation probe

struct SandboxTools {
  std::string bwrap;
  std::string unshare;
  std::string setpriv;  // bubblewrap run by root hands the command to kSandboxUid with it
};

// Found once, apart from the probe (which runs commands that need them).
const SandboxTools& sandbox_tools() {
  static std::once_flag once;
  static SandboxTools tools;
  std::call_once(once, [] {
    tools.bwrap = find_in_path("bwrap");
    tools.unshare = find_in_path("unshare");
    tools.setpriv = find_in_path("setpriv");
  });
  return tools;
}

struct IsolationChoice {
  Isolation isolation = Isolation::kNone;
};

// --mount-proc: in a new pid namespace the host's /proc makes /proc/self point at the
// wrong process, and the CUDA driver then fails ("OS call failed"); a private /proc
// (and the mount namespace it needs) keeps it right. Run by root, the command is
// kSandboxUid's.
std::vector<std::string> unshare_args() {
  std::vector<std::string> args = {"-n", "-p", "-f", "--kill-child", "--mount-proc"};
  if (sandbox_drops_root()) {
    args.insert(args.end(), {"--setgid", std::to_string(kSandboxGid), "--setuid", std::to_string(kSandboxUid)});
  }
  return args;
}

Outcome run_with(const Command& command, Isolation isolation);

// Each mode is probed as commands will run in it (the same plan, the same user).
bool works(Isolation isolation) {
  if (isolation == Isolation::kNone) return true;
  if (isolation == Isolation::kBubblewrap && sandbox_tools().bwrap.empty()) return false;
  if (isolation == Isolation::kUnshare && sandbox_tools().unshare.empty()) return false;
  Command probe;
  probe.shell = "exit 0";
  probe.timeout_s = 10;
  probe.output_cap = 64 << 10;
  probe.max_file_bytes = 0;
  probe.cwd = "/";
  probe.isolate = true;
  return run_with(probe, isolation).ok();
}

std::optional<Isolation> parse_isolation(const std::string& name) {
  for (Isolation isolation :
       {Isolation::kBubblewrap, Isolation::kNamespaces, Isolation::kUnshare, Isolation::kNone}) {
    if (name == isolation_name(isolation)) return isolation;
  }
  return std::nullopt;
}

std::mutex forced_mutex;
std::string& forced_isolation() {
  static std::string name;
  return name;
}

IsolationChoice probe_isolation() {
  IsolationChoice choice;
  std::string forced_name;
  {
    std::lock_guard lock(forced_mutex);
    forced_name = forced_isolation();
  }
  if (const char* forced = forced_name.c_str(); *forced) {
    std::optional<Isolation> wanted = parse_isolation(forced);
    if (wanted && works(*wanted)) {
      choice.isolation = *wanted;
      return choice;
    }
    std::fprintf(stderr,
                 "maxcode: warning: MAXCODE_ISOLATION=%s is %s; probing for what works\n",
                 forced, wanted ? "not available on this machine"
                                        : "not one of bubblewrap, namespaces, unshare, none");
  }
  for (Isolation isolation : {Isolation::kBubblewrap, Isolation::kNamespaces, Isolation::kUnshare}) {
    if (works(isolation)) {
      choice.isolation = isolation;
      return choice;
    }
  }
  return choice;
}

const IsolationChoice& isolation_choice() {
  static std::once_flag once;
  static IsolationChoice choice;
  std::call_once(once, [] { choice = probe_isolation(); });
  return choice;
}

// ---------------------------------------------------------------- launch plan

// Isolation::kNamespaces, prepared in the parent (paths, maps) for the child: the
// sandbox's root is built on a tmpfs mounted at kStaging, then pivoted into.
constexpr const char* kStaging = "/tmp";

struct NamespaceMount {
  SandboxMount::Kind kind;
  std::string source;               // a bind's host path, or a link's text
  std::string target;               // under kStaging
  std::string final_target;         // the path in the sandbox, once pivoted
  std::vector<std::string> make_dirs;  // under kStaging, created first (if missing)
  bool directory = true;
  bool device = false;              // a device node (or directory of them) of /dev
};

struct NamespacePlan {
  bool enabled = false;
  bool user_ns = false;  // not root: a user namespace grants the right to mount
  bool drop_root = false;  // root: the command runs as kSandboxUid
  std::string uid_map, gid_map;
  std::vector<NamespaceMount> mounts;  // in order; /dev's are among them
  std::string staged_dev, staged_shm, staged_proc;  // mount points under kStaging
  std::string tmpfs_options = "mode=1777";  // of the writable tmpfs mounts (/tmp, /dev/shm)
};

// Everything the child needs, built before fork: between fork and exec only
// async-signal-safe calls are allowed, so no allocation happens there.
struct LaunchPlan {
  std::vector<std::string> argv_storage;
  std::vector<std::string> env_storage;
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::string cwd;  // empty = inherit
  std::size_t max_file_bytes = 0;
  long max_processes = 0;           // RLIMIT_NPROC; 0 = none
  std::size_t max_memory_bytes = 0;  // RLIMIT_DATA; 0 = none
  std::vector<int> cgroup_fds;       // cgroup.procs of the command's group, joined before exec
  int max_fd = 0;  // fallback bound for marking fds close-on-exec
  bool feed_stdin = false;  // stdin is a pipe we write to, not /dev/null
  NamespacePlan ns;
};

std::vector<std::string> build_env(const Command& command) {
  std::set<std::string> overridden;
  for (const auto& [name, value] : command.env) overridden.insert(name);
  std::vector<std::string> env;
  char** inherited = command.parent_env == ParentEnv::kInherit ? environ : nullptr;
  for (char** entry = inherited; entry && *entry; ++entry) {
    std::string text = *entry;
    if (!overridden.count(text.substr(0, text.find('=')))) env.push_back(std::move(text));
  }
  for (const auto& [name, value] : command.env) {
    // A name given twice: the last one wins, as with repeated setenv.
    auto same = [&](const std::string& e) { return e.compare(0, name.size() + 1, name + "=") == 0; };
    env.erase(std::remove_if(env.begin(), env.end(), same), env.end());
    env.push_back(name + "=" + value);
  }
  return env;
}

// Key files the process knows of (MAXCODE_APP_KEY_FILE): the sandbox shows /dev/null in
// their place wherever they would be visible.
std::vector<std::string> hidden_files() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& file : secret_files()) {
    if (fs::is_regular_file(file, ec)) files.push_back(file);
  }
  return files;
}

// GPU device nodes: the minimal /dev lacks them, and candidates must reach the GPU.
std::vector<std::string> gpu_devices() {
  std::vector<std::string> devices;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/dev", ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("nvidia", 0) == 0) devices.push_back(entry.path().string());
  }
  std::sort(devices.begin(), devices.end());
  return devices;
}

// The kernel's settings stay read-only in the sandbox's own /proc.
constexpr const char* kProcReadOnly[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"};

// The view's mounts as bwrap's options, in the view's order.
void add_view_mounts(std::vector<std::string>& argv, const Command& command, const std::vector<SandboxMount>& view) {
  using Kind = SandboxMount::Kind;
  // bwrap makes the missing parents of a mount point with the mode of the host's
  // directory: a workspace under a mkdtemp folder (0700, root's) had a parent in the
  // sandbox that the sandbox's user could not pass, and every build there failed with
  // "The source directory ... does not exist". Parents are made here first, 0755.
  std::vector<std::string> made = {"/"};
  auto make_parents = [&](const std::string& target) {
    std::vector<std::string> missing;
    for (fs::path at = fs::path(target).parent_path(); !at.empty() && at != at.root_path(); at = at.parent_path()) {
      const std::string dir = at.string();
      if (std::find(made.begin(), made.end(), dir) != made.end()) break;
      missing.push_back(dir);
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      argv.insert(argv.end(), {"--perms", "0755", "--dir", *it});
      made.push_back(*it);
    }
    made.push_back(target);
  };
  for (const auto& mount : view) {
    if (mount.kind == Kind::kReadOnly || mount.kind == Kind::kWritable) make_parents(mount.target);
    else made.push_back(mount.target);
    switch (mount.kind) {
      case Kind::kReadOnly:
        argv.insert(argv.end(), {"--ro-bind", mount.source, mount.target});
        break;
      case Kind::kWritable:
        argv.insert(argv.end(), {"--bind", mount.source, mount.target});
        break;
      case Kind::kSymlink:
        argv.insert(argv.end(), {"--symlink", mount.source, mount.target});
        break;
      case Kind::kTmpfs:
        // Writable by everyone, as /tmp is (bwrap's default 0755 is root's alone), and
        // no larger than the workspace quota: its pages are memory, which no other limit
        // of the run counts.
        argv.insert(argv.end(), {"--perms", "1777"});
        if (command.max_disk_bytes > 0) argv.insert(argv.end(), {"--size", std::to_string(command.max_disk_bytes)});
        argv.insert(argv.end(), {"--tmpfs", mount.target});
        break;
      case Kind::kHidden:
        if (mount.directory) {
          argv.insert(argv.end(), {"--tmpfs", mount.target, "--remount-ro", mount.target});
        } else {
          argv.insert(argv.end(), {"--ro-bind", "/dev/null", mount.target});
        }
        break;
    }
  }
}

// /dev with the GPUs and a private /dev/shm, a /proc whose kernel settings are
// read-only, a read-only root, and no network.
void add_system_mounts(std::vector<std::string>& argv, const Command& command) {
  // A private /dev/shm that every user may write (CUDA needs it; bwrap's is root's alone).
  argv.insert(argv.end(), {"--dev", "/dev", "--perms", "1777"});
  if (command.max_disk_bytes > 0) argv.insert(argv.end(), {"--size", std::to_string(command.max_disk_bytes)});
  argv.insert(argv.end(), {"--tmpfs", "/dev/shm"});
  for (const auto& device : gpu_devices()) argv.insert(argv.end(), {"--dev-bind", device, device});
  // bwrap run by root keeps every capability and leaves /proc/sys writable: both would
  // let a candidate remount the host's file system or change kernel settings.
  argv.insert(argv.end(), {"--proc", "/proc"});
  for (const char* path : kProcReadOnly) argv.insert(argv.end(), {"--ro-bind-try", path, path});
  // The root itself (a tmpfs of bwrap's) is read-only; the mounts on it keep their own.
  argv.insert(argv.end(), {"--remount-ro", "/", "--unshare-net", "--unshare-pid", "--die-with-parent"});
}

std::vector<std::string> bwrap_argv(const SandboxTools& tools, const Command& command, const std::string& cwd,
                                    const std::vector<SandboxMount>& view) {
  std::vector<std::string> argv = {tools.bwrap};
  add_view_mounts(argv, command, view);
  add_system_mounts(argv, command);
  std::vector<std::string> command_argv = {"/bin/sh", "-c", command.shell};
  if (sandbox_drops_root()) {
    // Run by root, bwrap gives the command root; setpriv hands it to kSandboxUid with no
    // capability left. bwrap keeps only what it needs to enter the working directory
    // (which kSandboxUid owns) and setpriv to switch user; setpriv runs nothing else.
    argv.insert(argv.end(), {"--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                             "--cap-add", "CAP_SETPCAP", "--cap-add", "CAP_DAC_OVERRIDE",
                             "--cap-add", "CAP_DAC_READ_SEARCH"});
    command_argv.insert(command_argv.begin(),
                        {tools.setpriv, "--reuid=" + std::to_string(kSandboxUid),
                         "--regid=" + std::to_string(kSandboxGid), "--clear-groups", "--inh-caps=-all",
                         "--bounding-set=-all", "--no-new-privs", "--"});
  } else {
    argv.insert(argv.end(), {"--cap-drop", "ALL"});
  }
  argv.insert(argv.end(), {"--chdir", cwd, "--"});
  argv.insert(argv.end(), command_argv.begin(), command_argv.end());
  return argv;
}

// Most mounts a namespace sandbox makes (the child keeps their descriptors on its stack).
constexpr std::size_t kMaxMounts = 128;

// Every directory from below `root` down to `path` (or its parent), under kStaging.
void add_dirs(const std::string& path, bool include_self, std::vector<std::string>& dirs) {
  fs::path dir = kStaging;
  fs::path relative = fs::path(path).relative_path();
  std::vector<fs::path> parts(relative.begin(), relative.end());
  if (!include_self && !parts.empty()) parts.pop_back();
  for (const auto& part : parts) {
    dir /= part;
    dirs.push_back(dir.string());
  }
}

std::string plan_namespaces(const std::vector<SandboxMount>& view, std::size_t tmpfs_bytes, NamespacePlan& ns) {
  ns.enabled = true;
  // The writable tmpfs mounts no larger than the workspace quota (see bwrap_argv).
  if (tmpfs_bytes > 0) ns.tmpfs_options += ",size=" + std::to_string(tmpfs_bytes);
  ns.user_ns = geteuid() != 0;
  ns.drop_root = sandbox_drops_root();
  ns.uid_map = std::to_string(geteuid()) + " " + std::to_string(geteuid()) + " 1\n";
  ns.gid_map = std::to_string(getegid()) + " " + std::to_string(getegid()) + " 1\n";
  auto add = [&](SandboxMount::Kind kind, const std::string& source, const std::string& target, bool directory,
                 bool device) {
    NamespaceMount mount{kind, source, std::string(kStaging) + target, target, {}, directory, device};
    add_dirs(target, directory && kind != SandboxMount::Kind::kSymlink, mount.make_dirs);
    ns.mounts.push_back(std::move(mount));
  };
  for (const auto& mount : view) add(mount.kind, mount.source, mount.target, mount.directory, false);
  // A minimal /dev: the harmless nodes, the GPU's, a private /dev/shm and the links to
  // /proc that programs expect. The host's other nodes (disks, /dev/log's socket) stay out.
  ns.staged_dev = std::string(kStaging) + "/dev";
  std::error_code ec;
  for (const char* node : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}) {
    if (fs::exists(node, ec)) add(SandboxMount::Kind::kWritable, node, node, false, true);
  }
  for (const auto& device : gpu_devices()) {
    add(SandboxMount::Kind::kWritable, device, device, fs::is_directory(device, ec), true);
  }
  for (const auto& [link, text] : {std::pair<const char*, const char*>{"/dev/fd", "/proc/self/fd"},
                                   {"/dev/stdin", "/proc/self/fd/0"}, {"/dev/stdout", "/proc/self/fd/1"},
                                   {"/dev/stderr", "/proc/self/fd/2"}}) {
    add(SandboxMount::Kind::kSymlink, text, link, false, true);
  }
  add(SandboxMount::Kind::kTmpfs, "", "/dev/shm", true, true);
  ns.staged_shm = std::string(kStaging) + "/dev/shm";
  ns.staged_proc = std::string(kStaging) + "/proc";
  if (ns.mounts.size() > kMaxMounts) return "more than " + std::to_string(kMaxMounts) + " mounts in the sandbox";
  return "";
}

// How many processes `uid` has now (the /proc entries it owns).
long processes_of_user(uid_t uid) {
  long count = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    struct stat st;
    if (stat(entry.path().c_str(), &st) == 0 && st.st_uid == uid) ++count;
  }
  return count;
}

// The bytes the files under `path` take on disk (links not followed; what cannot be
// read counts nothing).
std::uintmax_t bytes_under(const std::string& path) {
  std::uintmax_t total = 0;
  auto add = [&total](const char* p) {
    struct stat st;
    if (lstat(p, &st) == 0) total += static_cast<std::uintmax_t>(st.st_blocks) * 512;
  };
  add(path.c_str());
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    add(it->path().c_str());
  return total;
}

std::uintmax_t bytes_under(const std::vector<std::string>& paths) {
  std::uintmax_t total = 0;
  for (const auto& path : paths) total += bytes_under(path);
  return total;
}

// The command's limits as the plan's rlimits, where its group does not hold them.
void plan_limits(const Command& command, Isolation isolation, const CommandGroup& group, LaunchPlan& plan) {
  plan.max_file_bytes = command.max_file_bytes;
  // The rlimits only where the command's group does not hold the limit: the group's
  // limit stops the command with a clear reason, an rlimit fails one call in it.
  plan.cgroup_fds = group.join_fds();
  plan.max_memory_bytes = group.holds_memory() ? 0 : command.max_memory_bytes;
  // RLIMIT_NPROC counts every process of the real user. Run by root, the command is the
  // sandbox's user's; root itself is exempt (so nothing to count); any other user's own
  // processes are already counted.
  const bool own_user = isolation != Isolation::kNone && sandbox_drops_root();
  if (command.max_processes > 0 && !group.holds_processes() && (own_user || geteuid() != 0))
    plan.max_processes = command.max_processes + (own_user ? 0 : processes_of_user(getuid()));
}

// The sandbox's view (bubblewrap or maxcode's own namespaces) and the argv that enters
// it. Returns an error message, or "".
std::string plan_sandbox(const Command& command, Isolation isolation, LaunchPlan& plan) {
  std::error_code ec;
  fs::path cwd = fs::canonical(command.cwd.empty() ? fs::current_path(ec) : fs::path(command.cwd), ec);
  if (ec) return errno_text("working directory " + command.cwd, ec.value());
  SandboxNeeds needs;
  needs.cwd = cwd.string();
  for (const auto& path : command.writable_paths) {
    fs::path real = fs::canonical(path, ec);
    if (ec) return "writable path does not exist: " + path;
    needs.writable.push_back(real.string());
  }
  for (const auto& path : command.readable_paths) {
    fs::path real = fs::canonical(path, ec);
    if (ec) return "readable path does not exist: " + path;
    needs.readable.push_back(real.string());
  }
  needs.secret_files = hidden_files();
  const std::vector<SandboxMount> view = sandbox_view(needs);
  if (isolation == Isolation::kNamespaces) {
    plan.argv_storage = {"/bin/sh", "-c", command.shell};
    plan.cwd = needs.cwd;
    return plan_namespaces(view, command.max_disk_bytes, plan.ns);
  }
  if (sandbox_drops_root() && sandbox_tools().setpriv.empty())
    return "bubblewrap run by root needs setpriv (util-linux) to run the command as an unprivileged user";
  plan.argv_storage = bwrap_argv(sandbox_tools(), command, cwd.string(), view);
  return "";
}

// Returns an error message, or "" when the plan is ready.
std::string make_plan(const Command& command, Isolation isolation, const CommandGroup& group, LaunchPlan& plan) {
  std::error_code ec;
  if (!command.cwd.empty() && !fs::is_directory(command.cwd, ec)) {
    return "working directory does not exist: " + command.cwd;
  }
  plan.cwd = command.cwd;
  plan_limits(command, isolation, group, plan);
  plan.env_storage = build_env(command);
  plan.feed_stdin = !command.stdin_data.empty();
  // Timed runs are timed by the parent (Outcome::wall_s), around the wait: no clock
  // reading ever passes through the child, its shell or anything it starts.
  switch (isolation) {
    case Isolation::kNone:
      plan.argv_storage = {"/bin/sh", "-c", command.shell};
      break;
    case Isolation::kUnshare:
      plan.argv_storage = {sandbox_tools().unshare};
      for (const auto& arg : unshare_args()) plan.argv_storage.push_back(arg);
      plan.argv_storage.insert(plan.argv_storage.end(), {"--", "/bin/sh", "-c", command.shell});
      break;
    case Isolation::kBubblewrap:
    case Isolation::kNamespaces: {
      const std::string error = plan_sandbox(command, isolation, plan);
      if (!error.empty()) return error;
      break;
    }
  }
  for (auto& arg : plan.argv_storage) plan.argv.push_back(arg.data());
  plan.argv.push_back(nullptr);
  for (auto& entry : plan.env_storage) plan.envp.push_back(entry.data());
  plan.envp.push_back(nullptr);
  long open_max = sysconf(_SC_OPEN_MAX);
  plan.max_fd = static_cast<int>(std::clamp(open_max, 256L, 65536L));
  return "";
}

// ---------------------------------------------------------------- the child side

// What the child writes to the report pipe when it cannot exec.
struct ChildFailure {
  // -1 = joining the cgroup, 0 = chdir, 1 = exec, 2 = fd setup, 3.. = the namespace
  // sandbox (kNsStages)
  int stage;
  int err;
};

constexpr const char* kNsStages[] = {"entering namespaces", "mounting the sandbox",
                                     "making the file system read-only", "forking into the pid namespace",
                                     "mounting /proc", "dropping capabilities", "pivoting into the sandbox's root",
                                     "running as the sandbox's user"};
// The stages of the namespace sandbox as ChildFailure numbers them (3 + kNsStages' index).
enum NsStage : int { kNsEnter = 3, kNsMount, kNsReadOnly, kNsFork, kNsProc, kNsCapabilities, kNsPivot, kNsUser };

struct ChildFds {
  int in;  // becomes stdin: /dev/null or the read end of the stdin pipe
  int out;
  int err;
  int report;
};

[[noreturn]] void child_fail(int report_fd, int stage) {
  ChildFailure failure{stage, errno};
  ssize_t ignored = write(report_fd, &failure, sizeof failure);
  (void)ignored;
  _exit(127);
}

bool write_file(const char* path, const std::string& text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

bool set_read_only(const char* path, bool read_only, unsigned flags) {
  MountAttr attr{};
  (read_only ? attr.attr_set : attr.attr_clr) = MOUNT_ATTR_RDONLY;
  return syscall(SYS_mount_setattr, AT_FDCWD, path, flags, &attr, sizeof attr) == 0;
}

// The intermediate process outside the new pid namespace: lives as long as the
// namespace's first process and ends as it did, as `unshare --fork` does.
[[noreturn]] void mirror_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) _exit(127);
  }
  if (WIFSIGNALED(status)) {
    kill(getpid(), WTERMSIG(status));
    _exit(128 + WTERMSIG(status));
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

// Pid 1 of the new pid namespace: reaps orphans until the command ends, then ends as it
// did (a signal as 128 + N, as bubblewrap reports it: pid 1 cannot kill itself). Its
// end kills everything left in the namespace. The command is not pid 1 itself, because
// pid 1 ignores the signals it sends itself (`kill -SEGV $$` would do nothing).
[[noreturn]] void init_process(pid_t command) {
  for (;;) {
    int status = 0;
    pid_t got = waitpid(-1, &status, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) _exit(127);
    if (got != command) continue;
    _exit(WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WIFEXITED(status) ? WEXITSTATUS(status) : 127);
  }
}

// A mount point under kStaging for `mount`: its directories, then the file or
// directory itself (a file for a file's bind). Never changes what exists already.
bool make_mount_point(const NamespaceMount& mount) {
  for (const auto& dir : mount.make_dirs) {
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  if (mount.kind == SandboxMount::Kind::kSymlink || mount.directory) return true;
  int fd = open(mount.target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
  if (fd >= 0) close(fd);
  return fd >= 0 || errno == EEXIST;
}

// Forks; the parent closes every file it holds (ours, or another thread's command's
// pipes, so that each closes with the command that writes it) and stays as `parent`
// says until the child ends. Returns in the child.
void fork_keeping_none(int report_fd, int max_fd, void (*parent)(pid_t)) {
  pid_t pid = _Fork();
  if (pid < 0) child_fail(report_fd, kNsFork);
  if (pid > 0) {
    if (close_range(0, ~0U, 0) != 0) {
      for (int fd = 0; fd < max_fd; ++fd) close(fd);
    }
    parent(pid);
    _exit(127);  // `parent` never returns
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);
}

// Every mount of the plan, under kStaging: trees to bind are cloned first, before the
// staging tmpfs covers kStaging (/tmp, where the workspaces and maxcode's libraries
// often are); then the namespace's own /proc, mounted while the host's is still in this
// mount namespace (in a user namespace the kernel refuses a /proc that would show more).
void stage_mounts(const NamespacePlan& ns, int report_fd) {
  using Kind = SandboxMount::Kind;
  int trees[kMaxMounts];
  const std::size_t n = ns.mounts.size();
  for (std::size_t i = 0; i < n; ++i) {
    trees[i] = -1;
    const Kind kind = ns.mounts[i].kind;
    const char* source = kind == Kind::kHidden && !ns.mounts[i].directory ? "/dev/null" : ns.mounts[i].source.c_str();
    if (kind == Kind::kReadOnly || kind == Kind::kWritable || (kind == Kind::kHidden && !ns.mounts[i].directory)) {
      trees[i] = static_cast<int>(
          syscall(SYS_open_tree, AT_FDCWD, source, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
      if (trees[i] < 0) child_fail(report_fd, kNsMount);
    }
  }
  if (mount("tmpfs", kStaging, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) child_fail(report_fd, kNsMount);
  bool dev_mounted = false;
  for (std::size_t i = 0; i < n; ++i) {
    const NamespaceMount& m = ns.mounts[i];
    if (m.device && !dev_mounted) {
      // /dev is a tmpfs of its own that may hold device nodes (no nodev).
      if (mkdir(ns.staged_dev.c_str(), 0755) != 0 && errno != EEXIST) child_fail(report_fd, kNsMount);
      if (mount("tmpfs", ns.staged_dev.c_str(), "tmpfs", MS_NOSUID, "mode=0755") != 0) child_fail(report_fd, kNsMount);
      dev_mounted = true;
    }
    if (!make_mount_point(m)) child_fail(report_fd, kNsMount);
    switch (m.kind) {
      case Kind::kSymlink:
        if (symlink(m.source.c_str(), m.target.c_str()) != 0 && errno != EEXIST) child_fail(report_fd, kNsMount);
        break;
      case Kind::kTmpfs:
        if (mount("tmpfs", m.target.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, ns.tmpfs_options.c_str()) != 0)
          child_fail(report_fd, kNsMount);
        break;
      case Kind::kHidden:
        if (m.directory) {
          if (mount("tmpfs", m.target.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
            child_fail(report_fd, kNsMount);
          break;
        }
        [[fallthrough]];
      case Kind::kReadOnly:
      case Kind::kWritable:
        if (syscall(SYS_move_mount, trees[i], "", AT_FDCWD, m.target.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
          child_fail(report_fd, kNsMount);
        close(trees[i]);
        break;
    }
  }
  if (mkdir(ns.staged_proc.c_str(), 0555) != 0 && errno != EEXIST) child_fail(report_fd, kNsProc);
  if (mount("proc", ns.staged_proc.c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    child_fail(report_fd, kNsProc);
}

// In the new root: everything read-only but the private /tmp and /dev/shm themselves
// (not what is bound beneath them: a read-only working directory) and the writable
// paths, with all below them.
void seal_mounts(const NamespacePlan& ns, int report_fd) {
  using Kind = SandboxMount::Kind;
  if (!set_read_only("/", true, AT_RECURSIVE)) child_fail(report_fd, kNsReadOnly);
  for (const auto& m : ns.mounts) {
    if (m.kind == Kind::kTmpfs && !set_read_only(m.final_target.c_str(), false, 0)) child_fail(report_fd, kNsReadOnly);
    if (m.kind == Kind::kWritable && !m.device && !set_read_only(m.final_target.c_str(), false, AT_RECURSIVE))
      child_fail(report_fd, kNsReadOnly);
  }
  // /proc stays writable: the CUDA driver writes to its own /proc entries, and on a
  // read-only /proc every allocation fails ("OS call failed", seen on the H100 runner).
  // What writes the kernel's settings is made read-only instead, as container runtimes do.
  if (!set_read_only("/proc", false, 0)) child_fail(report_fd, kNsProc);
  for (const char* path : kProcReadOnly) {
    if (mount(path, path, nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      if (errno == ENOENT) continue;
      child_fail(report_fd, kNsProc);
    }
    if (!set_read_only(path, true, AT_RECURSIVE)) child_fail(report_fd, kNsProc);
  }
}

// Without capabilities the command can neither remount nor unmount what hides the
// host; no_new_privs keeps a setuid program from granting them back.
void drop_privileges(const NamespacePlan& ns, int report_fd) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) child_fail(report_fd, kNsCapabilities);
  for (int cap = 0; cap < 64; ++cap) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  if (ns.drop_root) {
    // Raw system calls: glibc's wrappers would signal threads this process lacks.
    if (syscall(SYS_setgroups, 0, nullptr) != 0 || syscall(SYS_setresgid, kSandboxGid, kSandboxGid, kSandboxGid) != 0 ||
        syscall(SYS_setresuid, kSandboxUid, kSandboxUid, kSandboxUid) != 0)
      child_fail(report_fd, kNsUser);
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // a change of user clears it
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capset, &header, data) != 0) child_fail(report_fd, kNsCapabilities);
}

// Isolation::kNamespaces, in the child: returns in the process that is to exec the
// command (pid 2 of a new pid namespace). Async-signal-safe calls only.
void enter_namespaces(const NamespacePlan& ns, int report_fd, int max_fd) {
  if (ns.user_ns) {
    if (unshare(CLONE_NEWUSER) != 0) child_fail(report_fd, kNsEnter);
    if (!write_file("/proc/self/setgroups", "deny") || !write_file("/proc/self/uid_map", ns.uid_map) ||
        !write_file("/proc/self/gid_map", ns.gid_map))
      child_fail(report_fd, kNsEnter);
  }
  if (unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID) != 0) child_fail(report_fd, kNsEnter);
  // Pid 1 of the new namespace builds the sandbox: its /proc must be the namespace's.
  fork_keeping_none(report_fd, max_fd, mirror_child);
  // Nothing done here may propagate back to the host's mounts.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) child_fail(report_fd, kNsMount);
  stage_mounts(ns, report_fd);
  // The new root; the host's is detached and gone from this mount namespace.
  if (chdir(kStaging) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 || umount2(".", MNT_DETACH) != 0 ||
      chdir("/") != 0)
    child_fail(report_fd, kNsPivot);
  seal_mounts(ns, report_fd);
  drop_privileges(ns, report_fd);
  fork_keeping_none(report_fd, max_fd, init_process);
}

// Runs between fork and exec: async-signal-safe calls only (setrlimit and close_range
// are not on POSIX's list but are plain system calls in glibc).
[[noreturn]] void exec_child(const LaunchPlan& plan, ChildFds fds) {
  setpgid(0, 0);
  // First of all, so that everything the command becomes is in its group: "0" moves
  // the writer.
  for (int fd : plan.cgroup_fds) {
    if (write(fd, "0", 1) != 1) child_fail(fds.report, -1);
  }

  // Ignored signals survive exec; the command should start with defaults (SIGPIPE,
  // SIGXFSZ in particular) and nothing blocked.
  struct sigaction default_action;
  std::memset(&default_action, 0, sizeof default_action);
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &default_action, nullptr);

  // Move every fd above the standard ones first so dup2 cannot clobber a source.
  int sources[3] = {fds.in, fds.out, fds.err};
  for (int& fd : sources) {
    fd = fcntl(fd, F_DUPFD, 3);
    if (fd < 0) child_fail(fds.report, 2);
  }
  fds.report = fcntl(fds.report, F_DUPFD_CLOEXEC, 4);
  if (fds.report < 0) _exit(127);
  for (int target = 0; target < 3; ++target) {
    if (dup2(sources[target], target) < 0) child_fail(fds.report, 2);
  }
  const int first_closed = 3;
  // Nothing else the parent holds (other threads' pipes, sockets) may leak into the
  // command; the report pipe stays open until exec closes it.
  if (close_range(first_closed, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = first_closed; fd < plan.max_fd; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }

  if (plan.ns.enabled) enter_namespaces(plan.ns, fds.report, plan.max_fd);
  if (!plan.cwd.empty() && chdir(plan.cwd.c_str()) != 0) child_fail(fds.report, 0);
  if (plan.max_file_bytes > 0) {
    struct rlimit limit;
    limit.rlim_cur = limit.rlim_max = plan.max_file_bytes;
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  if (plan.max_processes > 0) {
    struct rlimit limit;
    limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(plan.max_processes);
    setrlimit(RLIMIT_NPROC, &limit);
  }
  if (plan.max_memory_bytes > 0) {
    struct rlimit limit;
    limit.rlim_cur = limit.rlim_max = plan.max_memory_bytes;
    setrlimit(RLIMIT_DATA, &limit);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);

  execve(plan.argv[0], plan.argv.data(), plan.envp.data());
  child_fail(fds.report, 1);
}

// ---------------------------------------------------------------- the parent side

struct Child {
  int in = -1;      // write end of the stdin pipe, or -1
  pid_t pid = -1;
  int pidfd = -1;   // readable when the child exits; -1 if the kernel lacks pidfds
  int out = -1;     // read ends
  int err = -1;
};

bool make_pipe(int fds[2], std::string& error) {
  if (pipe2(fds, O_CLOEXEC) != 0) {
    error = errno_text("pipe", errno);
    return false;
  }
  return true;
}

std::string describe_failure(const ChildFailure& failure, const LaunchPlan& plan) {
  switch (failure.stage) {
    case -1:
      return errno_text("joining the command's cgroup", failure.err);
    case 0:
      return errno_text("chdir " + plan.cwd, failure.err);
    case 1:
      return errno_text(std::string("exec ") + plan.argv[0], failure.err);
    case 2:
      return errno_text("setting up the child's files", failure.err);
    default: {
      std::size_t stage = static_cast<std::size_t>(failure.stage - 3);
      const char* what = stage < std::size(kNsStages) ? kNsStages[stage] : "namespace sandbox";
      return errno_text(std::string("isolation (namespaces): ") + what, failure.err);
    }
  }
}

// The child's pipes: its stdin (a pipe we feed, or /dev/null), stdout, stderr, and the
// report pipe on which it says why it could not exec. Each holds [read end, write end].
struct ChildPipes {
  int in[2] = {-1, -1};  // [0] becomes the child's stdin, [1] is ours when feeding it
  int out[2] = {-1, -1}, err[2] = {-1, -1}, report[2] = {-1, -1};

  // Returns an error message or ""; on an error every pipe opened is closed again.
  std::string open(bool feed_stdin) {
    std::string error;
    if (feed_stdin) {
      if (!make_pipe(in, error)) return error;
    } else {
      in[0] = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (in[0] < 0) return errno_text("open /dev/null", errno);
    }
    for (int* pipe : {out, err, report}) {
      if (make_pipe(pipe, error)) continue;
      close_all();
      return error;
    }
    return "";
  }

  void close_all() {
    for (int* pipe : {in, out, err, report})
      for (int i : {0, 1}) close_fd(pipe[i]);
  }
};

// Waits on the report pipe until the child has exec'd (the pipe closes) or said why it
// could not. Returns the reason, or "" once it runs.
std::string wait_for_exec(ChildPipes& pipes, pid_t pid, const LaunchPlan& plan) {
  ChildFailure failure{};
  ssize_t got;
  do {
    got = read(pipes.report[0], &failure, sizeof failure);
  } while (got < 0 && errno == EINTR);
  close_fd(pipes.report[0]);
  if (got != static_cast<ssize_t>(sizeof failure)) return "";
  pipes.close_all();
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  return describe_failure(failure, plan);
}

// Forks the child and waits until it has exec'd. Returns an error message or "".
std::string spawn(const LaunchPlan& plan, Child& child) {
  ChildPipes pipes;
  if (std::string error = pipes.open(plan.feed_stdin); !error.empty()) return error;

  // Blocked so that none of our signal handlers runs in the child before it resets them.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = fork();
  if (pid == 0) exec_child(plan, {pipes.in[0], pipes.out[1], pipes.err[1], pipes.report[1]});
  int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);

  for (int* fd : {&pipes.in[0], &pipes.out[1], &pipes.err[1], &pipes.report[1]}) close_fd(*fd);
  if (pid < 0) {
    pipes.close_all();
    return errno_text("fork", fork_errno);
  }
  // Also set here so the group exists before we might signal it, whoever runs first.
  setpgid(pid, pid);
  if (std::string error = wait_for_exec(pipes, pid, plan); !error.empty()) return error;

  child.pid = pid;
  child.out = pipes.out[0];
  child.err = pipes.err[0];
  for (int fd : {child.out, child.err}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  // Non-blocking, so that a child that stops reading cannot stall the supervision loop.
  child.in = pipes.in[1];
  if (child.in >= 0) fcntl(child.in, F_SETFL, fcntl(child.in, F_GETFL) | O_NONBLOCK);
  child.pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  return "";
}

// True once the direct child has exited. It stays a zombie (WNOWAIT) so its pid, which
// is also the group id, cannot be reused before we have killed the group.
bool has_exited(pid_t pid) {
  siginfo_t info;
  std::memset(&info, 0, sizeof info);
  if (waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
  return info.si_pid != 0;
}

void kill_group(pid_t pid) {
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);  // in case the child never got into its own group
}

// Reads what is available on `fd` into `buffer`, keeping out+err within `cap`.
// Returns false at end of file. Sets `exceeded` when the cap is passed.
bool read_some(int fd, std::string& buffer, std::size_t kept, std::size_t cap, bool& exceeded) {
  char chunk[65536];
  ssize_t got = read(fd, chunk, sizeof chunk);
  if (got < 0) return errno == EINTR || errno == EAGAIN;
  if (got == 0) return false;
  std::size_t room = cap > kept ? cap - kept : 0;
  std::size_t n = static_cast<std::size_t>(got);
  buffer.append(chunk, std::min(n, room));
  if (n > room) exceeded = true;
  return true;
}

// Writes as much of the rest of `data` as the pipe takes. Closes `fd` once everything is
// written, or when the child has closed its end: it need not read all of its input.
void feed_some(int& fd, const std::string& data, std::size_t& offset) {
  // Writing to a pipe nobody reads raises SIGPIPE, whose default kills us. Block it on
  // this thread for the write and take back the one the write may have left pending.
  sigset_t pipe_signal, old;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &old);
  ssize_t wrote = write(fd, data.data() + offset, data.size() - offset);
  int write_errno = errno;
  if (wrote < 0 && write_errno == EPIPE) {
    timespec no_wait{0, 0};
    while (sigtimedwait(&pipe_signal, nullptr, &no_wait) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (wrote < 0 && (write_errno == EINTR || write_errno == EAGAIN)) return;
  if (wrote > 0) offset += static_cast<std::size_t>(wrote);
  if (wrote < 0 || offset >= data.size()) close_fd(fd);
}

int poll_timeout_ms(Clock::time_point until, bool tick) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count();
  int ms = static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
  return tick ? std::min(ms, kExitPollMs) : ms;
}

// A limit's text with the setting it comes from, for Outcome::limit_exceeded.
std::string named(const std::string& text, const std::string& setting) {
  return setting.empty() ? text : text + " (" + setting + ")";
}

std::string group_limit_text(GroupLimit limit, const Command& command) {
  const GroupLimits limits{command.max_memory_bytes, command.max_processes, command.max_cpu_s};
  const Command::LimitSettings& settings = command.limit_settings;
  const std::string& setting = limit == GroupLimit::kMemory      ? settings.memory
                               : limit == GroupLimit::kProcesses ? settings.processes
                                                                 : settings.cpu;
  return named(describe_group_limit(limit, limits), setting);
}

// Collects output until the command is over, enforcing the time, output, disk and
// group limits: one poll loop, each limit checked by a method of its own.
class Supervisor {
 public:
  Supervisor(Child& child, const Command& command, const CommandGroup& group, Clock::time_point start, Outcome& outcome)
      : child_(child),
        command_(command),
        group_(group),
        outcome_(outcome),
        // Clamped so the conversion to clock ticks cannot overflow (a 30-year limit is none).
        deadline_(start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                              std::isnan(command.timeout_s) ? 0 : std::clamp(command.timeout_s, 0.0, 1e9)))),
        // The disk limit: the writable paths measured every second against their size at
        // the start (a walk of a build tree takes milliseconds).
        watch_disk_(command.max_disk_bytes > 0 && !command.writable_paths.empty()),
        disk_start_(watch_disk_ ? bytes_under(command.writable_paths) : 0),
        next_disk_check_(start + std::chrono::seconds(1)),
        // Memory and CPU time of all the command's processes, read from its group.
        watch_group_(group.holds_memory() || (group.holds_cpu() && command.max_cpu_s > 0)),
        next_group_check_(start + kGroupPoll) {}

  // Returns true if we killed the command (timeout, output cap, a limit).
  bool run() {
    while (true) {
      if (!exited_ && has_exited(child_.pid)) {
        exited_ = true;
        kill_group(child_.pid);  // background children must not outlive the command
        if (!drain_until_) drain_until_ = Clock::now() + kDrainGrace;
      }
      const bool pipes_open = child_.out >= 0 || child_.err >= 0;
      if (!pipes_open && (exited_ || killed_)) break;
      const auto now = Clock::now();
      if (running() && now >= deadline_) {
        outcome_.timed_out = true;
        stop(now);
      }
      if (watch_disk_ && running() && now >= next_disk_check_) check_disk(now);
      if (watch_group_ && running() && now >= next_group_check_) check_group(now);
      if (drain_until_ && now >= *drain_until_) break;
      if (exited_ || killed_) close_fd(child_.in);  // nobody left to read it
      if (!poll_once()) break;
    }
    if (!exited_) kill_group(child_.pid);  // drain gave up, or poll failed: end it regardless
    return killed_;
  }

 private:
  bool running() const { return !exited_ && !killed_; }

  void stop(Clock::time_point now) {
    killed_ = true;
    kill_group(child_.pid);
    drain_until_ = now + kDrainGrace;
  }

  void check_disk(Clock::time_point now) {
    next_disk_check_ = now + std::chrono::seconds(1);
    const std::uintmax_t size = bytes_under(command_.writable_paths);
    if (size <= disk_start_ || size - disk_start_ <= command_.max_disk_bytes) return;
    outcome_.limit_exceeded = named("it wrote " + std::to_string((size - disk_start_) >> 20) +
                                        " MiB to its writable paths, over the limit of " +
                                        std::to_string(command_.max_disk_bytes >> 20) + " MiB",
                                    command_.limit_settings.disk);
    stop(now);
  }

  void check_group(Clock::time_point now) {
    next_group_check_ = now + kGroupPoll;
    const GroupLimit limit = group_.hit();
    if (limit == GroupLimit::kNone) return;
    outcome_.limit_exceeded = group_limit_text(limit, command_);
    stop(now);
    group_.kill_all();  // those that left the process group too
  }

  // One wait for output, the child's exit or room for its input, and what it brought.
  // False when poll failed.
  bool poll_once() {
    // Slots 0 and 1 are stdout and stderr (fd -1 is skipped by poll), 2 the pidfd, 3 the
    // child's stdin while there is input left for it.
    pollfd polled[4] = {{child_.out, POLLIN, 0}, {child_.err, POLLIN, 0}, {-1, POLLIN, 0}, {child_.in, POLLOUT, 0}};
    if (!exited_) polled[2].fd = child_.pidfd;
    const bool tick = !exited_ && child_.pidfd < 0;
    int wait_ms = poll_timeout_ms(drain_until_ ? *drain_until_ : deadline_, tick);
    if (watch_disk_ && running()) wait_ms = std::min(wait_ms, poll_timeout_ms(next_disk_check_, false));
    if (watch_group_ && running()) wait_ms = std::min(wait_ms, poll_timeout_ms(next_group_check_, false));
    if (poll(polled, 4, wait_ms) < 0 && errno != EINTR) return false;
    if (child_.in >= 0 && polled[3].revents != 0) feed_some(child_.in, command_.stdin_data, fed_);
    int* fds[2] = {&child_.out, &child_.err};
    std::string* buffers[2] = {&outcome_.out, &outcome_.err};
    for (int i = 0; i < 2; ++i) {
      int& fd = *fds[i];
      if (fd < 0 || polled[i].revents == 0) continue;
      bool exceeded = false;
      const std::size_t kept = outcome_.out.size() + outcome_.err.size();
      if (!read_some(fd, *buffers[i], kept, command_.output_cap, exceeded)) close_fd(fd);
      if (exceeded && !killed_) {
        outcome_.output_exceeded = true;
        killed_ = true;
        kill_group(child_.pid);
      }
    }
    // Past the cap there is nothing more we want to read.
    if (outcome_.output_exceeded) {
      close_fd(child_.out);
      close_fd(child_.err);
    }
    return true;
  }

  Child& child_;
  const Command& command_;
  const CommandGroup& group_;
  Outcome& outcome_;
  const Clock::time_point deadline_;
  const bool watch_disk_;
  const std::uintmax_t disk_start_;
  Clock::time_point next_disk_check_;
  const bool watch_group_;
  Clock::time_point next_group_check_;
  bool exited_ = false;
  bool killed_ = false;
  std::optional<Clock::time_point> drain_until_;
  std::size_t fed_ = 0;  // bytes of stdin_data written so far
};

bool supervise(Child& child, const Command& command, const CommandGroup& group, Clock::time_point start,
               Outcome& outcome) {
  return Supervisor(child, command, group, start, outcome).run();
}

void reap(const Child& child, bool killed, Outcome& outcome) {
  int status = 0;
  pid_t got;
  do {
    got = waitpid(child.pid, &status, 0);
  } while (got < 0 && errno == EINTR);
  if (got != child.pid || killed) return;
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.term_signal = WTERMSIG(status);
}

std::string signal_text(int sig) {
  const char* name = strsignal(sig);
  return "signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
}

}  // namespace

const char* isolation_name(Isolation isolation) {
  switch (isolation) {
    case Isolation::kBubblewrap:
      return "bubblewrap";
    case Isolation::kNamespaces:
      return "namespaces";
    case Isolation::kUnshare:
      return "unshare";
    case Isolation::kNone:
      return "none";
  }
  return "none";
}

Isolation available_isolation() { return isolation_choice().isolation; }

void force_isolation(const std::string& name) {
  std::lock_guard lock(forced_mutex);
  forced_isolation() = name;
}

bool sandbox_drops_root() { return geteuid() == 0; }

void hand_to_sandbox_user(const std::string& path) {
  if (!sandbox_drops_root() || path.empty()) return;
  auto hand = [](const fs::path& entry) {
    struct stat st;
    if (lstat(entry.c_str(), &st) != 0) return;
    // A file with another name elsewhere may be a host file a command linked into its
    // workspace: never given away.
    if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) return;
    if (st.st_uid != kSandboxUid || st.st_gid != kSandboxGid) {
      if (lchown(entry.c_str(), kSandboxUid, kSandboxGid) != 0) return;
    }
  };
  hand(path);
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(path, ec))) return;
  for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    hand(it->path());
  }
}

Outcome run(const Command& command) {
  return run_with(command, command.isolate ? available_isolation() : Isolation::kNone);
}

Outcome run_isolated(const Command& command, Isolation isolation) {
  return run_with(command, command.isolate ? isolation : Isolation::kNone);
}

namespace {

Outcome run_with(const Command& command, Isolation isolation) {
  Outcome outcome;
  // Made before the clock starts, removed after it stops: timed runs do not pay for it.
  const CommandGroup group(command.limit_scope == LimitScope::kCommand
                               ? GroupLimits{command.max_memory_bytes, command.max_processes, command.max_cpu_s}
                               : GroupLimits{});
  auto start = Clock::now();
  auto finish = [&] {
    outcome.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    return outcome;
  };
  outcome.isolation = isolation;

  LaunchPlan plan;
  Child child;
  std::string error = make_plan(command, outcome.isolation, group, plan);
  if (error.empty()) error = spawn(plan, child);
  if (!error.empty()) {
    outcome.spawn_failed = true;
    outcome.spawn_error = error;
    return finish();
  }
  if (command.started) command.started(child.pid);

  bool killed = supervise(child, command, group, start, outcome);
  close_fd(child.in);
  close_fd(child.out);
  close_fd(child.err);
  reap(child, killed, outcome);
  close_fd(child.pidfd);
  if (group.active() && outcome.limit_exceeded.empty()) {
    // A process killed for memory just before the end; or a refused fork, which is the
    // cause of a command that then failed (or spun until its timeout).
    GroupLimit limit = group.hit();
    if (limit == GroupLimit::kNone && !outcome.ok() && group.processes_refused()) limit = GroupLimit::kProcesses;
    if (limit != GroupLimit::kNone) outcome.limit_exceeded = group_limit_text(limit, command);
  }
  finish();
  group.kill_all();  // nothing of the command outlives it, wherever it went
  return outcome;
}

}  // namespace

std::string Outcome::describe() const {
  if (spawn_failed) return "could not start: " + spawn_error;
  // The cause, where a timeout (a fork bomb refused at pids.max) or a crash followed.
  if (!limit_exceeded.empty()) return "stopped: " + limit_exceeded;
  if (timed_out) {
    char text[64];
    std::snprintf(text, sizeof text, "timed out after %.1f s", wall_s);
    return text;
  }
  if (output_exceeded) {
    return "output exceeded " + std::to_string(out.size() + err.size()) + " bytes";
  }
  if (term_signal != 0) return "killed by " + signal_text(term_signal);
  std::string text = "exit code " + std::to_string(exit_code);
  // The shell (and bwrap) report a child killed by signal N as exit code 128 + N.
  if (exit_code > 128 && exit_code < 128 + NSIG) {
    text += ", probably a child killed by " + signal_text(exit_code - 128);
  }
  return text;
}

std::string Outcome::tail(std::size_t max_bytes) const {
  // Both streams get a share (compiler errors go to stderr, test failures often to
  // stdout); one that needs less leaves the rest to the other.
  std::size_t out_wants = std::min(out.size(), max_bytes);
  std::size_t err_share = std::min(err.size(), std::max(max_bytes / 2, max_bytes - out_wants));
  std::size_t out_share = std::min(out.size(), max_bytes - err_share);
  std::string text = err.substr(err.size() - err_share);
  // A newline between the two, within the budget, when stderr ends mid-line.
  if (!text.empty() && out_share > 0 && text.back() != '\n') {
    text += '\n';
    --out_share;
  }
  return text + out.substr(out.size() - out_share);
}

std::string shell_quote(const std::string& text, Quote when) {
  constexpr const char* kPlain = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./:";
  if (when == Quote::when_needed && !text.empty() && text.find_first_not_of(kPlain) == std::string::npos)
    return text;
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string shell_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) out += (out.empty() ? "" : " ") + shell_quote(arg);
  return out;
}

}  // namespace maxcode
