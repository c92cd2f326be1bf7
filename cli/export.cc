// `maxcode export`: training data from a rollout store.
#include <filesystem>

#include "cli/subcommand.h"
#include "runner/job/job.h"

namespace maxcode::cli {
namespace {

class Export : public Subcommand {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* cmd = app.add_subcommand(
        "export", "training data from a rollout store: sft.jsonl (slow/fast pairs), rtg.jsonl (reward-to-go "
                  "samples), rewards.jsonl (staged rewards)");
    cmd->add_option("--db", db_, "the rollout store (rollouts.sqlite)")->required()->check(CLI::ExistingFile);
    cmd->add_option("--out", out_, "output directory (default: maxcode-export)");
    return cmd;
  }
  int run() override { return run_export(db_, out_); }

 private:
  std::filesystem::path db_, out_ = "maxcode-export";
};

}  // namespace

std::unique_ptr<Subcommand> export_command() { return std::make_unique<Export>(); }

}  // namespace maxcode::cli
