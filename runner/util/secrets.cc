#include "runner/util/secrets.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "runner/util/child_env.h"
#include "runner/util/text.h"

namespace maxcode {
namespace {

// A secret file's surrounding blank lines and spaces; any other control character
// could be part of the value.
constexpr std::string_view kSecretBlanks = " \t\r\n";

namespace fs = std::filesystem;

// Key files are small; anything larger is not one (and is not read).
constexpr std::uintmax_t kLargestKeyFile = 1 << 20;
// Shorter lines of a key file (blank lines, "Proc-Type: 4,ENCRYPTED") say nothing secret.
constexpr std::size_t kShortestKeyLine = 16;

const char* const kSecretWords[] = {"KEY",  "TOKEN",   "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL",
                                    "PRIVATE", "AUTH"};

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

void add_file_secrets(const fs::path& file, std::vector<std::string>& out) {
  // Not try_read_text: files.cc redacts what it writes through this file, and a
  // circle between the two would make neither usable alone.
  std::ifstream in(file, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  out.push_back(std::string(trim(content.str(), kSecretBlanks)));
  std::istringstream lines(content.str());
  for (std::string line; std::getline(lines, line);) {
    line = std::string(trim(line, kSecretBlanks));
    if (line.size() >= kShortestKeyLine && line.rfind("-----", 0) != 0) out.push_back(line);
  }
}

class Registry {
 public:
  Registry() { add_from(process_environment(), {}); }

  void add(const std::string& value) {
    if (value.size() < kShortestSecret) return;
    std::lock_guard<std::mutex> lock(mutex_);
    values_.insert(value);
  }

  void add_from(const std::vector<std::pair<std::string, std::string>>& environment,
                const std::vector<std::string>& names) {
    for (const auto& value : secrets_in(environment, names)) add(value);
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& file : secret_files_in(environment, names)) files_.insert(file);
  }

  std::vector<std::string> values() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return {values_.begin(), values_.end()};
  }

  std::vector<std::string> files() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return {files_.begin(), files_.end()};
  }

 private:
  mutable std::mutex mutex_;
  std::set<std::string> values_;
  std::set<std::string> files_;
};

bool is_key_file(const std::string& value) {
  std::error_code ec;
  return !value.empty() && value.front() == '/' && fs::is_regular_file(value, ec);
}

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

bool looks_secret(const std::string& name) {
  const std::string name_upper = upper(name);
  for (const char* word : kSecretWords) {
    if (name_upper.find(word) != std::string::npos) return true;
  }
  return false;
}

std::vector<std::string> secrets_in(const std::vector<std::pair<std::string, std::string>>& environment,
                                    const std::vector<std::string>& also_secret) {
  std::vector<std::string> out;
  for (const auto& [name, value] : environment) {
    bool named = std::find(also_secret.begin(), also_secret.end(), name) != also_secret.end();
    if (!named && !looks_secret(name)) continue;
    std::error_code ec;
    // A path is no secret, but what it names is (MAXCODE_APP_KEY_FILE, credentials).
    if (is_key_file(value)) {
      if (fs::file_size(value, ec) <= kLargestKeyFile && !ec) add_file_secrets(value, out);
      continue;
    }
    out.push_back(value);
  }
  out.erase(std::remove_if(out.begin(), out.end(), [](const std::string& v) { return v.size() < kShortestSecret; }),
            out.end());
  return out;
}

std::vector<std::string> secret_files_in(const std::vector<std::pair<std::string, std::string>>& environment,
                                         const std::vector<std::string>& also_secret) {
  std::vector<std::string> out;
  for (const auto& [name, value] : environment) {
    bool named = std::find(also_secret.begin(), also_secret.end(), name) != also_secret.end();
    std::error_code ec;
    if (!(named || looks_secret(name)) || !is_key_file(value)) continue;
    fs::path real = fs::canonical(value, ec);
    if (!ec) out.push_back(real.string());
  }
  return out;
}

void add_secret(const std::string& value) { registry().add(value); }

void add_secret_variables(const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, std::string>> named;
  for (const auto& [name, value] : process_environment()) {
    if (std::find(names.begin(), names.end(), name) != names.end()) named.emplace_back(name, value);
  }
  registry().add_from(named, names);
}

std::vector<std::string> secret_files() { return registry().files(); }

std::string redact_secrets(std::string text) {
  std::vector<std::string> secrets = registry().values();
  // Longest first: a key that contains another is replaced whole.
  std::sort(secrets.begin(), secrets.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const auto& secret : secrets) {
    for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at)) {
      text.replace(at, secret.size(), "[redacted]");
      at += 10;
    }
  }
  return text;
}

}  // namespace maxcode
