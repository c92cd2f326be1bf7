#include "runner/evaluate/environment.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <thread>

#include "runner/util/cgroup.h"

namespace maxcode {

namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string command_line(const std::string& shell) {
  Command c;
  c.shell = shell;
  c.timeout_s = 10;
  Outcome o = run(c);
  return o.ok() ? first_line(o.out) : "unavailable";
}

}  // namespace

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

nlohmann::json describe_environment(Isolation isolation) {
  utsname u{};
  uname(&u);
  return {{"maxcode", MAXCODE_VERSION},
          {"os", std::string(u.sysname) + " " + u.release + " " + u.machine},
          {"cpu", cpu_model()},
          {"cores", std::thread::hardware_concurrency()},
          {"compiler", command_line("c++ --version 2>/dev/null")},
          {"isolation", isolation_name(isolation)},
          // How a command's memory, processes and CPU time are held here (cgroup.h):
          // together, or per process only where no cgroup can be made.
          {"limits", cgroup_support().summary},
          {"time", utc_now()}};
}

}  // namespace maxcode
