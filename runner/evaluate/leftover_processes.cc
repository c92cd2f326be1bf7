#include "runner/evaluate/leftover_processes.h"

#include <cstdlib>

namespace maxcode {

namespace {

// The wrapper's exit code when it found processes left running, and its report line
// ("\n<mark> <command's exit code>: <processes>\n" on stderr).
constexpr int kLeftoverExit = 212;
constexpr const char* kMark = "[maxcode: left running]";

}  // namespace

bool can_watch_for_leftovers(Isolation isolation) {
  return isolation == Isolation::kBubblewrap || isolation == Isolation::kNamespaces ||
         isolation == Isolation::kUnshare;
}

std::string watch_for_leftovers(const std::string& command) {
  // POSIX sh, builtins only after the command (nothing forked may show in the list).
  // Ours: this shell and its ancestors up to the namespace's init (pid 1), found from
  // /proc/self/stat ("pid (comm) state ppid ..."). Zombies are dead
  // already and do not count. What is found is killed, and the list read again until
  // nothing is alive: the sandbox's init may report the end of the command before the
  // kernel has ended the rest of its namespace, and a process left behind must not get
  // those milliseconds (to write into the workspace after its check, say). The bound
  // only stops a loop on processes that SIGKILL cannot end at once (uninterruptible).
  return "(\n" + command +
         "\n)\n"
         "__mc_rc=$?\n"
         "__mc_ours=' 1 '\n"
         "__mc_p=self\n"
         "while { read -r __mc_s < \"/proc/$__mc_p/stat\"; } 2>/dev/null; do\n"
         "  __mc_ours=\"$__mc_ours${__mc_s%% *} \"\n"
         "  __mc_s=${__mc_s##*) }\n"
         "  __mc_s=${__mc_s#* }\n"
         "  __mc_p=${__mc_s%% *}\n"
         "  case \"$__mc_p\" in ''|0|1|*[!0-9]*) break;; esac\n"
         "done\n"
         "__mc_left=\n"
         "__mc_round=0\n"
         "while [ $__mc_round -lt 2000 ]; do\n"
         "  __mc_alive=\n"
         "  for __mc_d in /proc/[0-9]*; do\n"
         "    __mc_n=${__mc_d#/proc/}\n"
         "    case \"$__mc_ours\" in *\" $__mc_n \"*) continue;; esac\n"
         "    { read -r __mc_s < \"$__mc_d/stat\"; } 2>/dev/null || continue\n"
         "    case \"${__mc_s##*) }\" in Z*|X*|x*) continue;; esac\n"
         "    __mc_alive=\"$__mc_alive $__mc_n\"\n"
         "    __mc_s=${__mc_s#* }\n"
         "    [ $__mc_round -eq 0 ] && __mc_left=\"$__mc_left, pid $__mc_n ${__mc_s%%) *})\"\n"
         "  done\n"
         "  [ -n \"$__mc_alive\" ] || break\n"
         "  kill -9 $__mc_alive 2>/dev/null\n"
         "  __mc_round=$((__mc_round + 1))\n"
         "done\n"
         "if [ -n \"$__mc_left\" ]; then\n"
         "  printf '\\n%s %s: %s\\n' '" +
         std::string(kMark) +
         "' \"$__mc_rc\" \"${__mc_left#, }\" >&2\n"
         "  exit " +
         std::to_string(kLeftoverExit) +
         "\n"
         "fi\n"
         "exit $__mc_rc\n";
}

std::string take_leftovers(Outcome& outcome) {
  if (outcome.spawn_failed || outcome.timed_out || outcome.output_exceeded || outcome.term_signal != 0 ||
      outcome.exit_code != kLeftoverExit)
    return "";
  // The last report line: the wrapper writes after the command has ended (a process
  // left behind could still write after it, but then it was left behind).
  const std::string mark = std::string("\n") + kMark + " ";
  const std::size_t at = outcome.err.rfind(mark);
  if (at == std::string::npos) return "";  // the command's own exit code, not the wrapper's
  const std::size_t begin = at + mark.size();
  std::size_t end = outcome.err.find('\n', begin);
  if (end == std::string::npos) end = outcome.err.size();
  const std::string line = outcome.err.substr(begin, end - begin);
  const std::size_t colon = line.find(": ");
  std::string processes = colon == std::string::npos ? line : line.substr(colon + 2);
  if (processes.empty()) processes = "unknown processes";
  char* stop = nullptr;
  const long code = colon == std::string::npos ? -1 : std::strtol(line.c_str(), &stop, 10);
  if (colon != std::string::npos && stop == line.c_str() + colon && code >= 0 && code <= 255)
    outcome.exit_code = static_cast<int>(code);
  outcome.err.erase(at, end - at + (end < outcome.err.size() ? 1 : 0));
  return processes;
}

}  // namespace maxcode
