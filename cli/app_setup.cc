// `maxcode app-setup`: creates the GitHub App through GitHub's manifest flow and stores
// its id, private key and webhook secret where `maxcode serve` reads them
// (bot/service/app/app_setup.h, docs/service.md "Creating the App").
#include <iostream>

#include "bot/service/app/app_setup.h"
#include "bot/service/service_config.h"
#include "cli/subcommand.h"

namespace maxcode::cli {
namespace {

class AppSetup : public Subcommand {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* cmd = app.add_subcommand(
        "app-setup", "create the GitHub App (manifest flow) and store its id, key and webhook secret for `maxcode serve`");
    cmd->add_option("--url", options_.public_url, "the service's public URL, e.g. https://maxcode.example.com");
    cmd->add_option("--out", out_, "folder for service.json, app-key.pem and webhook-secret.env (0600 each)")->required();
    cmd->add_option("--name", options_.name, "the App's name proposed to GitHub")->capture_default_str();
    cmd->add_option("--github-url", options_.github_url, "GitHub's web address (GitHub Enterprise: https://HOST)")
        ->capture_default_str();
    cmd->add_option("--api-url", options_.api_url, "GitHub's API root (GitHub Enterprise: https://HOST/api/v3)")
        ->capture_default_str();
    cmd->add_option("--org", options_.org, "create the App under this organization (default: your own account)");
    cmd->add_option("--listen", listen_, "HOST:PORT serving the setup page and GitHub's redirect")->capture_default_str();
    cmd->add_option("--code", code_, "convert this code from GitHub's redirect (…/app-setup/callback?code=CODE) and serve nothing");
    return cmd;
  }

  int run() override {
    using namespace bot::service;
    options_.out_dir = out_;
    try {
      if (!code_.empty()) {
        convert_and_store(options_, code_, std::cout);
        return 0;
      }
      if (options_.public_url.empty()) {
        std::cerr << "maxcode app-setup: --url is required (the service's public URL), unless --code is given\n";
        return 2;
      }
      parse_listen(listen_, "--listen", options_.host, options_.port);
      AppSetupServer server(options_, std::cout);
      server.bind();
      server.serve();
      return 0;
    } catch (const std::exception& e) {
      std::cerr << "maxcode app-setup: error: " << e.what() << "\n";
      return 1;
    }
  }

 private:
  bot::service::AppSetupOptions options_;
  std::string out_, listen_ = "127.0.0.1:8080", code_;
};

}  // namespace

std::unique_ptr<Subcommand> app_setup_command() { return std::make_unique<AppSetup>(); }

}  // namespace maxcode::cli
