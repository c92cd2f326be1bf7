// A benchmark more than a test: the CPU sampler's overhead on the CPU example's
// benchmark (examples/cpu-histogram), sampled runs against plain ones, interleaved.
// The target is under 5%; the figure is printed for the record. Only a gross excess
// fails (over 50%: a sampler firing far too often or a handler doing far too much):
// CI's shared 2-core machine once measured +5.8% for the same code that measures
// +1-3% when idle, so the 5% target is a printed figure, not a pass/fail line.
//
// Measured in CPU time (user + system, from wait4's rusage) as well as wall time:
// the sampler's cost is CPU work in the sampled process (signal delivery, the
// handler, writing the file), and CPU time is what other load on a shared 2-core CI
// machine disturbs least. The best of several rounds counts for each side.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "runner/util/process.h"
#include "runner/instrument/inject_paths.h"
#include "support/test_support.h"

extern char** environ;

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using testing::source_path;
using testing::TempDir;

struct Cost {
  double cpu_s = 0;
  double wall_s = 0;
};

// Runs `program` with `extra` added to the environment; stdout to /dev/null.
Cost run_once(const fs::path& program, const std::vector<std::string>& extra) {
  std::vector<std::string> env_storage(extra);
  for (char** e = environ; *e; ++e) env_storage.push_back(*e);
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string path = program.string();
  char* argv[] = {path.data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, path.c_str(), &actions, nullptr, argv, envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  Cost cost;
  cost.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  cost.cpu_s = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  return cost;
}

TEST(SamplerOverhead, PrintedForTheCpuExampleAndNeverGross) {
  const fs::path library = find_inject_libraries().sampler;
  ASSERT_FALSE(library.empty());
  TempDir dir;
  const fs::path example = source_path("examples/cpu-histogram");
  Command build;
  build.shell = "c++ -O3 -DNDEBUG -I" + (example / "src").string() + " -o " + (dir / "bench").string() + " " +
                (example / "src/histogram.cpp").string() + " " + (example / "bench/bench.cpp").string();
  build.timeout_s = 120;
  Outcome built = run(build);
  ASSERT_TRUE(built.ok()) << built.tail();
  fs::create_directories(dir / "profiles");
  const std::vector<std::string> plain_env{"MAXCODE_SEED=1234567"};
  const std::vector<std::string> sampled_env{"MAXCODE_SEED=1234567", "LD_PRELOAD=" + library.string(),
                                             "MAXCODE_PROFILE_DIR=" + (dir / "profiles").string()};

  run_once(dir / "bench", plain_env), run_once(dir / "bench", sampled_env);  // warm-up
  std::vector<Cost> plain, sampled;
  auto best = [](const std::vector<Cost>& v, double Cost::*field) {
    double b = v[0].*field;
    for (const auto& c : v) b = std::min(b, c.*field);
    return b;
  };
  double cpu_overhead = 0, wall_overhead = 0;
  // More rounds only while it looks over the target: noise only ever adds time.
  for (int round = 0; round < 25; ++round) {
    plain.push_back(run_once(dir / "bench", plain_env));
    sampled.push_back(run_once(dir / "bench", sampled_env));
    cpu_overhead = best(sampled, &Cost::cpu_s) / best(plain, &Cost::cpu_s) - 1;
    wall_overhead = best(sampled, &Cost::wall_s) / best(plain, &Cost::wall_s) - 1;
    if (round >= 6 && cpu_overhead < 0.05) break;
  }
  std::printf("sampler overhead on examples/cpu-histogram bench (best of %zu): CPU %+.2f%% (%.4f s plain, %.4f s "
              "sampled), wall %+.2f%% (%.4f s, %.4f s)\n",
              plain.size(), cpu_overhead * 100, best(plain, &Cost::cpu_s), best(sampled, &Cost::cpu_s),
              wall_overhead * 100, best(plain, &Cost::wall_s), best(sampled, &Cost::wall_s));
  if (cpu_overhead >= 0.05)
    std::printf("NOTE: over the 5%% target on this machine; a loaded machine adds time to either side\n");
  EXPECT_LT(cpu_overhead, 0.5) << "the sampler's cost is out of all proportion";
  EXPECT_FALSE(fs::is_empty(dir / "profiles"));  // it did sample
}

}  // namespace
}  // namespace maxcode
