// Processes a command leaves running: a daemon (setsid and a double fork leave the
// process group that runner/util/process.cc kills) started by a test or a benchmark,
// to serve saved results or to load the machine while the other side is timed.
//
// In a sandbox with its own pid namespace (bubblewrap, namespaces, unshare) every
// process of the command is visible in the sandbox's /proc and dies with it: none can
// outlive the step. What is left is to say so. The command runs in a subshell of a
// small wrapper that, once the subshell has ended, lists /proc: any live process other
// than the wrapper itself, its ancestors and the namespace's init was left behind. The
// wrapper kills those (until the list is empty: the sandbox's init may report the end
// of the command a moment before the kernel has ended the rest of its namespace), then
// exits with a code of its own and a report line on stderr (with the command's own
// exit code); take_leftovers() turns that back into the command's outcome plus the
// description. A candidate can print a report line of its own, but only to its own
// harm: the wrapper's exit code, which alone makes it count, is not the command's to
// set, and a process left behind cannot keep the wrapper from seeing it.
//
// Without a pid namespace (Isolation::kNone) /proc shows the whole machine and nothing
// ties an escaped daemon to its step: the check does not apply there (maxcode already
// warns that candidate code runs unconfined).
#pragma once

#include <string>

#include "runner/util/process.h"

namespace maxcode {

// Whether the check applies under `isolation` (it has a private pid namespace).
bool can_watch_for_leftovers(Isolation isolation);

// `command` wrapped so that the processes it leaves running are reported.
std::string watch_for_leftovers(const std::string& command);

// After a run of a watch_for_leftovers() command: "" when it left nothing running, else
// which processes ("pid 7 (sleep), pid 9 (sh)"); then `outcome` gets the command's own
// exit code back and loses the report line.
std::string take_leftovers(Outcome& outcome);

}  // namespace maxcode
