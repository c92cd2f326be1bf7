// The secret values this process holds, and their removal from everything it writes.
//
// The first line of defence is that secrets never reach a candidate (child_env.h); this
// is the second: whatever text leaves maxcode (result files, reports, trajectories,
// checkpoints, the rollout store, prompts sent to a model, PR bodies) passes through
// redact_secrets(), so that a key echoed by a server, a tool or a candidate that found
// one anyway is replaced by "[redacted]" before anyone reads it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace maxcode {

// Names that hold secrets by convention: containing KEY, TOKEN, SECRET, PASSWORD,
// PASSWD, CREDENTIAL, PRIVATE or AUTH, case-insensitively (OPENAI_API_KEY,
// GITHUB_TOKEN, MAXCODE_APP_KEY_FILE, AWS_SECRET_ACCESS_KEY, ...).
bool looks_secret(const std::string& name);

// Values shorter than this are never redacted: "1", "true" or a short word would turn
// up in unrelated text. No real key is this short.
constexpr std::size_t kShortestSecret = 8;

// The secrets found in `environment`: the value of every variable whose name looks
// secret or is in `also_secret`; where that value names a readable file (a key file),
// not the path but the file's content and each of its distinctive lines (16 or more
// characters, not a PEM "-----" armour line).
std::vector<std::string> secrets_in(const std::vector<std::pair<std::string, std::string>>& environment,
                                    const std::vector<std::string>& also_secret = {});

// The key files among them: values of those variables that name a regular file.
std::vector<std::string> secret_files_in(const std::vector<std::pair<std::string, std::string>>& environment,
                                         const std::vector<std::string>& also_secret = {});

// The process-wide registry. Filled from the process environment on first use; more
// names (the config's key variables) and values can be added at any time.
void add_secret(const std::string& value);
void add_secret_variables(const std::vector<std::string>& names);

// The key files the registry knows of (absolute paths): sandboxes hide them.
std::vector<std::string> secret_files();

// `text` with every registered secret (of kShortestSecret or more characters) replaced
// by "[redacted]", longest first.
std::string redact_secrets(std::string text);

}  // namespace maxcode
