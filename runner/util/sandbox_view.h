// What an isolated command sees of the host's file system: one list of mounts, in
// order, from which both sandboxes are built (bubblewrap's arguments and maxcode's own
// namespaces, runner/util/process.cc), so that the two cannot drift apart.
//
// The root is empty but for: the system's directories read-only (kSystemDirs: the
// toolchain, its libraries, /etc without its secrets), a private /tmp, the paths the
// command needs (its working directory read-only, the readable paths read-only, the
// writable paths) and, from each sandbox, a minimal /dev and a /proc of its own. The
// host's /run, /var, /home, /root, /srv, /mnt, /work and /tmp are not there: no Unix
// socket of the host can be reached through the file system (the network namespace
// takes care of abstract sockets), and no file outside what a build needs can be read.
#pragma once

#include <string>
#include <vector>

namespace maxcode {

// Top-level host paths every sandbox shows read-only (or as the link they are:
// /bin -> usr/bin). /usr holds /usr/local and, on the GPU runners, /usr/local/cuda.
inline constexpr const char* kSystemDirs[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
                                              "/libx32", "/etc", "/opt", "/sys"};

// Files and directories of /etc never shown, even though /etc is: password hashes and
// the host's private keys (covered by /dev/null, or an empty directory). And the
// host's SSH private keys, /etc/ssh/ssh_host_*_key.
inline constexpr const char* kEtcSecrets[] = {"/etc/shadow", "/etc/shadow-", "/etc/gshadow",
                                              "/etc/gshadow-", "/etc/security/opasswd", "/etc/ssl/private"};

struct SandboxMount {
  enum class Kind {
    kReadOnly,  // bind `source` at `target`, read-only
    kWritable,  // bind `source` at `target`, writable
    kSymlink,   // a symbolic link at `target` whose text is `source`
    kTmpfs,     // an empty, writable tmpfs at `target` (the private /tmp)
    kHidden,    // /dev/null over the file `target`, or an empty read-only directory over it
  };
  Kind kind;
  std::string source;
  std::string target;
  bool directory = true;  // the target is a directory (else a file: a file is its mount point)
};

// What the command needs of the host; every path canonical (no link in it).
struct SandboxNeeds {
  std::string cwd;
  std::vector<std::string> writable;
  std::vector<std::string> readable;
  // Key files maxcode knows of (secret_files()): hidden wherever they would be visible.
  std::vector<std::string> secret_files;
};

// The mounts, in the order they are to be made (a later one covers an earlier one).
std::vector<SandboxMount> sandbox_view(const SandboxNeeds& needs);

}  // namespace maxcode
