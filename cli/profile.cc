// `maxcode profile`: the hottest functions and kernels of a repository's benchmarks.
#include "cli/subcommand.h"
#include "runner/profile/command.h"

namespace maxcode::cli {
namespace {

class Profile : public Subcommand {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* cmd = app.add_subcommand(
        "profile", "run the benchmarks under the CPU sampler and the CUDA profiler; prints the "
                   "hottest functions and kernels and writes profile.json");
    cmd->add_option("REPO", o_.repo, "repository to profile (default: current directory)");
    cmd->add_option("--config", o_.config, "project file (default: REPO/.maxcode.json)");
    cmd->add_option("--out", o_.out, "output directory (default: maxcode-out)");
    cmd->add_option("--top", o_.top, "rows to print (default: 20)")->check(CLI::PositiveNumber);
    cmd->add_option("--min-share", o_.min_share, "leave out rows below this share of the time (default: 0.005)")
        ->check(CLI::Range(0.0, 1.0));
    cmd->add_option("--import", o_.imports,
                    "rank existing profiles instead (perf script text, callgrind.out.*, gperftools "
                    "CPU profile, maxcode sampler or GPU files); repeatable")
        ->check(CLI::ExistingFile);
    cmd->add_flag("!--no-build", o_.build, "run the benchmarks in REPO as it is built now, without copying or building");
    cmd->add_flag("!--no-debug-flags", o_.debug_flags,
                  "build with the project's flags only (default adds -g -fno-omit-frame-pointer "
                  "through CFLAGS, CXXFLAGS and CUDAFLAGS)");
    cmd->add_flag("--keep-workspaces", o_.keep_workspaces, "keep the build and the raw profile files for debugging");
    cmd->add_flag("-q,--quiet", o_.quiet, "no progress line");
    return cmd;
  }
  int run() override { return run_profile(o_); }

 private:
  ProfileOptions o_;
};

}  // namespace

std::unique_ptr<Subcommand> profile_command() { return std::make_unique<Profile>(); }

}  // namespace maxcode::cli
