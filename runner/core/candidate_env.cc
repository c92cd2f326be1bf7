#include "runner/core/candidate_env.h"

#include <algorithm>

namespace maxcode {
namespace {

void collect_key_names(const nlohmann::json& node, std::vector<std::string>& out) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (key == "api_key_env" && value.is_string() && !value.get<std::string>().empty())
        out.push_back(value.get<std::string>());
      else
        collect_key_names(value, out);
    }
  } else if (node.is_array()) {
    for (const auto& element : node) collect_key_names(element, out);
  }
}

}  // namespace

std::vector<std::string> secret_variable_names(const Config& config) {
  std::vector<std::string> names = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "GH_TOKEN",
                                    "MAXCODE_APP_KEY_FILE"};
  collect_key_names(config.llm, names);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

EnvVars candidate_env(const Config& config, const EnvVars& from, const std::filesystem::path& home,
                      const EnvVars& step_env) {
  EnvAllowList allow = default_env_allow_list();
  allow.names.insert(allow.names.end(), config.workspace.env_allow.begin(), config.workspace.env_allow.end());
  allow.secret_names = secret_variable_names(config);
  EnvVars env = filter_env(from, allow);
  std::filesystem::create_directories(home);
  env.emplace_back("HOME", home.string());
  for (const auto& [name, value] : step_env) {
    env.erase(std::remove_if(env.begin(), env.end(), [&](const auto& e) { return e.first == name; }), env.end());
    env.emplace_back(name, value);
  }
  return env;
}

}  // namespace maxcode
