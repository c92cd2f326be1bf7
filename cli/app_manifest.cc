// `maxcode app-manifest`: prints the GitHub App manifest for GitHub's manifest flow.
#include <iostream>

#include "bot/service/app/app_manifest.h"
#include "cli/subcommand.h"
#include "runner/util/json_io.h"

namespace maxcode::cli {
namespace {

class AppManifest : public Subcommand {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* cmd = app.add_subcommand("app-manifest", "print the GitHub App manifest (permissions, events, webhook URL)");
    cmd->add_option("--url", url_, "the service's public URL, e.g. https://maxcode.example.com")->required();
    cmd->add_option("--name", name_, "the App's name");
    return cmd;
  }
  int run() override {
    std::cout << dump_json(bot::service::app_manifest(name_, url_), 2) << "\n";
    return 0;
  }

 private:
  std::string url_, name_ = "maxcode";
};

}  // namespace

std::unique_ptr<Subcommand> app_manifest_command() { return std::make_unique<AppManifest>(); }

}  // namespace maxcode::cli
