#include "cli/job_options.h"

#include <string>
#include <vector>

#include "runner/core/search_choices.h"

namespace maxcode::cli {

void add_job_options(CLI::App* cmd, JobOptions& o) {
  cmd->add_option("REPO", o.repo, "repository to work on (default: current directory)");
  cmd->add_option("--config", o.config, "project file (default: REPO/.maxcode.json)");
  cmd->add_option("--out", o.out, "output directory (default: maxcode-out)");
  cmd->add_option("--signature", o.signature, "text of the signature that picks one overload");
  cmd->add_flag("--keep-workspaces", o.keep_workspaces, "keep candidate workspaces for debugging");
  cmd->add_flag("-q,--quiet", o.quiet, "no progress line");
}

void add_policy_option(CLI::App* cmd, std::string& policy) {
  std::vector<std::string> names;
  std::string help;
  for (std::string_view name : search_policy_names()) {
    names.emplace_back(name);
    help += (help.empty() ? "" : " | ") + names.back();
  }
  cmd->add_option("--policy", policy, help + " (default: search.policy)")->check(CLI::IsMember(names));
}

}  // namespace maxcode::cli
