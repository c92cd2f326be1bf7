// Running child processes with limits: the one place maxcode starts a program.
//
// Every command runs through /bin/sh -c in its own process group, with a wall-clock
// limit, a cap on the output kept, and (when asked) inside a sandbox that cuts the
// network and leaves only named paths writable. On timeout or output overflow the whole
// process tree is killed, not just the shell.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace maxcode {

// How a command was isolated. Reported in results, because a user must know when
// untrusted code ran with the network reachable.
//
// bubblewrap and namespaces show the command the same restricted root (sandbox_view.h):
// the system's directories read-only (/usr, /bin, /sbin, /lib*, /etc without its
// secrets, /opt, /sys), the writable paths, the readable paths and a working directory
// outside them read-only, a private /tmp, a minimal /dev (with the GPU's nodes), a /proc
// of its own; nothing else of the host (no /run, /var, /home, /root, /srv, /mnt, the
// host's /tmp: no Unix socket of the host), and a network namespace of its own (no
// abstract socket of the host either). When maxcode runs as root the command runs as
// the unprivileged kSandboxUid, never as root.
enum class Isolation {
  kBubblewrap,  // bwrap: the root above, no network, own pid ns
  // No tool needed (the GPU runners have no bwrap): maxcode itself unshares mount, net
  // and pid namespaces (and a user namespace when not root), builds the root above on a
  // tmpfs and pivots into it, makes every mount read-only but the writable paths, a
  // private /tmp and /dev/shm, mounts /proc, and drops every capability so the command
  // cannot undo any of it. As with bubblewrap, a small init is pid 1 and a command
  // killed by signal N exits 128 + N.
  kNamespaces,
  kUnshare,     // unshare -n -p: no network, own pid namespace, filesystem as is
  kNone,        // neither available: plain child process
};
const char* isolation_name(Isolation isolation);

// Probes once per process which isolation works on this machine (bwrap, then
// namespaces, then unshare), or takes the one force_isolation() named.
Isolation available_isolation();

// bubblewrap | namespaces | unshare | none: use that one (tests, debugging) when it works
// here, else say so and probe; "" = probe. The CLI calls it once, from MAXCODE_ISOLATION,
// before the first command runs: the choice is made once per process.
void force_isolation(const std::string& name);

// Where a child's environment starts from.
enum class ParentEnv {
  kInherit,  // maxcode's own environment, with `env` added (maxcode's own tools)
  kDrop,     // exactly `env` and nothing else (untrusted commands: no secret can leak)
};

// How the limits of a Command count (see Command::limit_scope).
enum class LimitScope {
  kCommand,  // all its processes together, in a cgroup, where one can be made
  kProcess,  // each process on its own (rlimits) only
};

struct Command {
  std::string shell;  // run as /bin/sh -c <shell>
  std::string cwd;    // working directory; empty = inherit
  // Added to (or overriding) the parent's environment; the whole environment with
  // ParentEnv::kDrop.
  std::vector<std::pair<std::string, std::string>> env;
  ParentEnv parent_env = ParentEnv::kInherit;
  // Written to the child's standard input, which is closed after the last byte (or when
  // the child closes its end without reading it all). Empty: stdin is /dev/null.
  std::string stdin_data;
  double timeout_s = 600;
  // Bytes kept per stream. A child that writes more than this (stdout + stderr
  // together) is killed and reported as output_exceeded.
  std::size_t output_cap = 16u << 20;
  // Largest file the child may write (RLIMIT_FSIZE); 0 = no limit.
  std::size_t max_file_bytes = 4ull << 30;
  // What one command may take of the machine (issue 22: a candidate forked 2,000
  // processes, touched 6 GB and wrote 5 GB). 0 = no limit for each.
  // Processes (and threads) at once: the command's own in its cgroup (pids.max; a fork
  // past it fails, and a command that then fails reports the limit); where no cgroup
  // holds them, every process of the command's user (RLIMIT_NPROC): with maxcode as
  // root the command runs as the sandbox's user, whose processes these are; otherwise
  // the user's processes already running are added, so that the command gets this many
  // more.
  long max_processes = 0;
  // Memory of all the command's processes together in its cgroup (memory.max, no swap:
  // past it the kernel kills one and maxcode stops the rest); where no cgroup holds it,
  // heap and private writable mappings per process (RLIMIT_DATA: unlike RLIMIT_AS it
  // leaves alone the address space CUDA reserves but does not use).
  std::size_t max_memory_bytes = 0;
  // What the writable paths may grow by while the command runs, measured every
  // second; beyond it the command is stopped and Outcome::limit_exceeded says so.
  std::size_t max_disk_bytes = 0;
  // CPU time of all the command's processes together; past it the command is stopped.
  // Held only where a cgroup can count it (cgroup.h); 0 = no limit.
  double max_cpu_s = 0;
  // Whether the limits above hold the command's processes together (a cgroup of its own,
  // where this machine gives one: cgroup.h) or each process alone (the rlimits). With
  // kCommand, memory, processes and CPU time past their limits stop the command and
  // Outcome::limit_exceeded says so; what no cgroup can hold here stays with the rlimits.
  LimitScope limit_scope = LimitScope::kCommand;
  // The settings the limits come from, named when one is hit ("workspace.max_memory_mb"),
  // so that the user knows what to change. Empty: not named.
  struct LimitSettings {
    std::string processes, memory, cpu, disk;
  } limit_settings;
  bool isolate = false;
  // With isolation: paths the child may write (the workspace, caches). /tmp is a
  // private tmpfs. Everything else is read-only under bubblewrap and namespaces.
  std::vector<std::string> writable_paths;
  // With isolation: host paths the child may read but not write (maxcode's injection
  // libraries, a build's declared `workspace.sandbox_paths`). The sandbox shows nothing
  // of the host outside the system's directories otherwise.
  std::vector<std::string> readable_paths;
  // Called with the child's pid once it is started, before it is waited for: a monitor
  // that attributes processes to this command (its descendants) learns its root.
  std::function<void(long pid)> started;
};

struct Outcome {
  int exit_code = -1;    // valid when the child exited normally
  int term_signal = 0;   // non-zero when killed by a signal (and not by us)
  bool timed_out = false;
  bool output_exceeded = false;
  // The limit the command ran into, and the setting to change ("its processes used
  // more than 256 MiB of memory together (workspace.max_memory_mb)"); empty if none.
  // A limit is the cause even where a timeout or a crash followed from it.
  std::string limit_exceeded;
  bool spawn_failed = false;  // fork/exec failed; spawn_error says why
  std::string spawn_error;
  std::string out;  // captured stdout (at most output_cap bytes)
  std::string err;  // captured stderr (at most output_cap bytes)
  double wall_s = 0;
  Isolation isolation = Isolation::kNone;

  bool ok() const {
    return !spawn_failed && !timed_out && !output_exceeded && limit_exceeded.empty() && term_signal == 0 &&
           exit_code == 0;
  }
  // One line for people: "exit code 2", "killed by signal 11 (Segmentation fault)",
  // "timed out after 5.0 s", "output exceeded 16777216 bytes", "stopped: its processes
  // used more than 256 MiB of memory together (workspace.max_memory_mb)".
  std::string describe() const;
  // The last `max_bytes` of stderr then stdout, for error messages and critiques.
  std::string tail(std::size_t max_bytes = 4000) const;
};

Outcome run(const Command& command);
// As run(), isolated as asked when command.isolate (tests of each mode; the probe).
Outcome run_isolated(const Command& command, Isolation isolation);

// The user an isolated command runs as when maxcode runs as root ("nobody"): a
// candidate never runs as root, and cannot read what only root may (/etc/shadow).
constexpr unsigned kSandboxUid = 65534;
constexpr unsigned kSandboxGid = 65534;
// Whether isolated commands run as kSandboxUid here (maxcode runs as root).
bool sandbox_drops_root();
// Gives `path` and everything below it (links themselves, never their targets) to the
// sandbox's user, so that an isolated command can write there: for the writable paths
// that maxcode made (workspaces, its compiler cache). Does nothing unless
// sandbox_drops_root(). Entries it already owns are left as they are (their ctime too),
// and so are files with more than one link (a host file linked into a workspace).
void hand_to_sandbox_user(const std::string& path);

// Whether shell_quote leaves a word that means the same unquoted (letters, digits and
// _-./:) as it is: commands that people read and paste, such as a PR's steps to
// reproduce, read better without quotes; commands the program runs quote every word.
enum class Quote { always, when_needed };

// `text` as one word for /bin/sh; argv as a command line of such words.
std::string shell_quote(const std::string& text, Quote when = Quote::always);
std::string shell_command(const std::vector<std::string>& argv);

}  // namespace maxcode
