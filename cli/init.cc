// `maxcode init`: writes a commented .maxcode.json for a repository and checks the
// original with it (runner/job/init_project.h); prints what the person still decides.
#include <cstdio>

#include "cli/environment.h"
#include "cli/subcommand.h"
#include "runner/job/init_project.h"

namespace maxcode::cli {
namespace {

void print_report(const InitReport& r) {
  std::printf("maxcode init: %s %s\n", r.rechecked ? "checked" : "wrote", r.config_file.c_str());
  const ProjectScan& s = r.scan;
  std::string build = s.cmake      ? "CMake" + (s.preset.empty() ? std::string() : " (preset " + s.preset + ")")
                      : s.meson    ? "Meson"
                      : s.makefile ? "make"
                      : s.unread_build_file.empty() ? "no build system"
                                                    : s.unread_build_file + " (not read by init)";
  std::printf("found: %s; %s; %zu benchmark(s)%s\n", build.c_str(),
              s.ctest         ? "ctest tests"
              : s.meson_tests ? "meson tests"
              : s.meson       ? "no meson tests"
                              : "no ctest tests",
              s.benchmarks.size(), s.cuda ? "; CUDA" : "");
  for (const ScannedBenchmark& b : s.benchmarks)
    std::printf("  %s: %s (%s)\n", b.name.c_str(), b.binary.c_str(), b.framework.c_str());
  for (const std::string& note : s.notes) std::printf("  note: %s\n", note.c_str());
  if (r.checked) {
    std::printf("checked the original:\n");
    for (const InitCheck& c : r.checks) {
      std::printf("  %-5s %s\n", c.ok ? "ok" : "FAIL", c.what.c_str());
      if (!c.detail.empty() && !c.ok) std::printf("        %s\n", c.detail.c_str());
    }
  } else {
    std::printf("the original was not checked (--no-check)\n");
  }
  if (!r.findings.empty()) {
    std::printf("findings:\n");
    for (const std::string& f : r.findings) std::printf("  - %s\n", f.c_str());
  }
  std::printf("still to decide (the DECIDE comments in %s):\n", r.config_file.filename().c_str());
  for (std::size_t i = 0; i < r.decisions.size(); ++i) std::printf("  %zu. %s\n", i + 1, r.decisions[i].c_str());
}

class Init : public Subcommand {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* cmd = app.add_subcommand(
        "init", "write a commented .maxcode.json for a repository (CMake, ctest, benchmark programs, Google "
                "Benchmark), check the original with it, and print what is left to decide");
    cmd->add_option("PATH", o_.repo, "repository (default: current directory)")->check(CLI::ExistingDirectory);
    cmd->add_option("--config", o_.config, "file to write (default: PATH/.maxcode.json)");
    cmd->add_flag("--force", o_.force, "replace an existing config");
    cmd->add_flag("--recheck", o_.recheck, "check the existing config as it is (after a fix by hand); writes nothing");
    cmd->add_flag("!--no-check", o_.check, "write the config without building and running the original");
    cmd->add_flag("-q,--quiet", quiet_, "no progress line");
    return cmd;
  }
  int run() override {
    o_.env = read_environment();
    Progress progress(stderr, quiet_);
    try {
      InitReport report = init_project(o_, progress);
      print_report(report);
      return report.ok() ? 0 : 1;
    } catch (const std::exception& e) {
      progress.note(std::string("maxcode: error: ") + e.what());
      return 1;
    }
  }

 private:
  InitOptions o_;
  bool quiet_ = false;
};

}  // namespace

std::unique_ptr<Subcommand> init_command() { return std::make_unique<Init>(); }

}  // namespace maxcode::cli
