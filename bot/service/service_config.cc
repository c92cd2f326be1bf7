#include "bot/service/service_config.h"
#include "bot/service/queue/sql_database.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "bot/delivery/deliver.h"
#include "runner/util/files.h"
#include "runner/util/json_io.h"
#include "runner/util/json_reader.h"

namespace maxcode::bot::service {

namespace {

using nlohmann::json;

// Bounds of the service's numbers: a duration at least a tenth of a second, a count at
// least one.
constexpr Bound kAtLeast(double min) { return {min, false}; }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool is_full_name(const std::string& s) {
  const auto slash = s.find('/');
  return slash != std::string::npos && slash > 0 && slash + 1 < s.size() && s.find('/', slash + 1) == std::string::npos;
}

bool is_env_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; }) &&
         !std::isdigit(static_cast<unsigned char>(s[0]));
}

// The names of the variables that hold the secrets (never the secrets).
void read_secret_names(const JsonObject& root, ServiceConfig& c) {
  for (auto [name, target] : {std::pair<const char*, std::string*>{"webhook_secret_env", &c.webhook_secret_env},
                              {"admin_token_env", &c.admin_token_env},
                              {"runner_token_env", &c.runner_token_env},
                              {"store_password_env", &c.store_password_env}}) {
    *target = root.string(name, *target);
    if (root.has(name) && !is_env_name(*target))
      root.fail(name, "expected the name of an environment variable (the secret is never in this file)");
  }
}

void read_tls(const JsonNode& node, ServiceConfig& c) {
  const JsonObject tls(node, {"cert_file", "key_file"});
  if (!tls.has("cert_file") || !tls.has("key_file")) node.fail("needs both cert_file and key_file");
  c.tls_cert = tls.string("cert_file");
  c.tls_key = tls.string("key_file");
}

// An id GitHub gives as a number, written either way.
std::string id_text(const JsonNode& node) {
  return node.value().is_number() ? std::to_string(node.integer<long long>(1)) : node.string();
}

void read_github(const JsonNode& node, ServiceConfig& c) {
  const JsonObject g(node, {"api_url", "app_id", "app_key_file", "git_url", "max_retry_wait_s", "max_tries"});
  c.max_retry_wait_s = g.number("max_retry_wait_s", c.max_retry_wait_s, kNonNegative);
  c.max_tries = g.integer("max_tries", c.max_tries, 1);
  c.api_url = g.string("api_url", c.api_url);
  if (auto id = g.get("app_id")) c.app_id = id_text(*id);
  c.app_key_file = g.string("app_key_file", c.app_key_file);
  c.git_url = g.string("git_url", c.git_url);
}

void read_http(const JsonNode& node, ServiceConfig& c) {
  const JsonObject h(node, {"header_timeout_s", "request_timeout_s", "keep_alive_s", "max_connections"});
  c.http.header_timeout_s = h.number("header_timeout_s", c.http.header_timeout_s, kAtLeast(0.1));
  c.http.request_timeout_s = h.number("request_timeout_s", c.http.request_timeout_s, kAtLeast(0.1));
  c.http.keep_alive_s = h.number("keep_alive_s", c.http.keep_alive_s, kAtLeast(0.1));
  c.http.max_connections = h.integer<std::size_t>("max_connections", c.http.max_connections, 1);
}

void read_queue(const JsonNode& node, ServiceConfig& c) {
  const JsonObject q(node, {"lease_s", "max_attempts", "backoff_s", "long_poll_s", "work_lease_s"});
  c.work_lease_s = q.number("work_lease_s", c.work_lease_s, kAtLeast(1));
  c.lease_s = q.number("lease_s", c.lease_s, kAtLeast(1));
  c.max_attempts = q.integer("max_attempts", c.max_attempts, 1);
  c.backoff_s = q.number("backoff_s", c.backoff_s, kNonNegative);
  c.long_poll_s = q.number("long_poll_s", c.long_poll_s, kNonNegative);
}

void read_job(const JsonNode& node, ServiceConfig& c) {
  const JsonObject j(node, {"policy", "max_targets", "budget", "labels"});
  c.policy = j.string("policy", c.policy);
  c.max_targets = j.integer("max_targets", c.max_targets, 1);
  if (auto budget = j.get("budget")) {
    budget->expect(budget->value().is_object(), "an object");
    c.budget = budget->value();
  }
  c.labels = j.strings("labels", c.labels);
}

void read_repositories(const JsonNode& repos, ServiceConfig& c) {
  repos.expect(repos.value().is_object(), "an object of OWNER/NAME -> settings");
  for (const auto& [name, _] : repos.value().items()) {
    const JsonNode node = repos.child(name);
    if (!is_full_name(name)) node.fail("expected a repository as OWNER/NAME");
    const JsonObject r(node, {"push", "policy", "labels", "regressions"});
    RepositoryConfig rc;
    rc.push = r.boolean("push", rc.push);
    rc.policy = r.string("policy", rc.policy);
    rc.labels = r.strings("labels", rc.labels);
    rc.regressions = r.string("regressions", rc.regressions);
    if (r.has("regressions") && rc.regressions != "issue" && rc.regressions != "check-run" && rc.regressions != "none")
      r.fail("regressions", "expected \"issue\", \"check-run\" or \"none\"");
    c.repositories[lower(name)] = rc;
  }
}

ScheduleConfig read_schedule(const JsonNode& node, const std::vector<ScheduleConfig>& before) {
  const JsonObject s(node, {"name", "cron", "time_zone", "repository", "installation"});
  ScheduleConfig sc;
  if (!s.has("cron")) node.fail("needs cron (five fields: minute hour day-of-month month day-of-week)");
  sc.cron = s.string("cron");
  sc.time_zone = s.string("time_zone", sc.time_zone);
  sc.repository = s.string("repository");
  if (s.has("repository") && !is_full_name(sc.repository)) s.fail("repository", "expected OWNER/NAME");
  if (auto inst = s.get("installation")) sc.installation = id_text(*inst);
  if (sc.repository.empty() == sc.installation.empty()) node.fail("needs exactly one of repository and installation");
  sc.name =
      s.string("name", (sc.repository.empty() ? "installation " + sc.installation : sc.repository) + " " + sc.cron);
  for (const auto& other : before)
    if (other.name == sc.name) node.fail("a second schedule named '" + sc.name + "'");
  return sc;
}

void read_slurm(const JsonNode& node, ServiceConfig& c) {
  const JsonObject f(node, {"partition", "gpus", "setup_s", "time_limit_s", "sbatch_args", "runner_args", "maxcode",
                            "server_url", "output_dir", "job_name_prefix"});
  SlurmConfig& sc = c.slurm;
  sc.enabled = true;
  sc.partition = f.string("partition", sc.partition);
  sc.gpus = f.integer("gpus", sc.gpus, 0);
  sc.setup_s = f.number("setup_s", sc.setup_s, kNonNegative);
  // At least a minute: Slurm's time limits are in minutes.
  sc.time_limit_s = f.number("time_limit_s", sc.time_limit_s, kAtLeast(60));
  sc.sbatch_args = f.strings("sbatch_args", sc.sbatch_args);
  sc.runner_args = f.strings("runner_args", sc.runner_args);
  sc.maxcode = f.string("maxcode", sc.maxcode);
  sc.server_url = f.string("server_url", sc.server_url);
  if (f.has("server_url") && sc.server_url.rfind("http://", 0) != 0 && sc.server_url.rfind("https://", 0) != 0)
    f.fail("server_url", "expected http(s)://HOST:PORT, the service as the cluster's nodes reach it");
  sc.output_dir = f.string("output_dir", sc.output_dir);
  sc.job_name_prefix = f.string("job_name_prefix", sc.job_name_prefix);
  // Part of a Slurm job name that squeue is asked about: letters, digits, - and _.
  if (f.has("job_name_prefix") &&
      (sc.job_name_prefix.empty() || sc.job_name_prefix.size() > 40 ||
       !std::all_of(sc.job_name_prefix.begin(), sc.job_name_prefix.end(),
                    [](unsigned char ch) { return std::isalnum(ch) || ch == '-' || ch == '_'; })))
    f.fail("job_name_prefix", "expected 1 to 40 letters, digits, - or _");
}

}  // namespace

void parse_listen(const std::string& text, const std::string& what, std::string& host, int& port) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) throw ServiceConfigError(what + ": expected HOST:PORT, got '" + text + "'");
  const std::string digits = text.substr(colon + 1);
  if (digits.empty() || digits.size() > 5 || !std::all_of(digits.begin(), digits.end(), ::isdigit) || std::stoi(digits) > 65535)
    throw ServiceConfigError(what + ": '" + digits + "' is not a port (0-65535)");
  host = text.substr(0, colon);
  port = std::stoi(digits);
}

const RepositoryConfig& ServiceConfig::repository(const std::string& full_name) const {
  static const RepositoryConfig none;
  auto it = repositories.find(lower(full_name));
  return it == repositories.end() ? none : it->second;
}

std::string ServiceConfig::git_url_for(const std::string& full_name) const {
  if (git_url.empty()) return default_git_url(api_url, full_name);
  const auto slash = full_name.find('/');
  std::string out = git_url;
  for (auto [key, value] : {std::pair<std::string, std::string>{"{owner}", full_name.substr(0, slash)},
                            {"{name}", full_name.substr(slash + 1)}})
    for (auto at = out.find(key); at != std::string::npos; at = out.find(key)) out.replace(at, key.size(), value);
  return out;
}

ServiceConfig parse_service_config(const json& document, const std::string& label) {
  ServiceConfig c;
  const JsonNode document_node(document, label, raise_as<ServiceConfigError>);
  const JsonObject root(document_node, {"listen",
                                        "db",
                                        "store",
                                        "store_password_env",
                                        "data_dir",
                                        "webhook_secret_env",
                                        "admin_token_env",
                                        "runner_token_env",
                                        "tls",
                                        "public_url",
                                        "github",
                                        "max_body_bytes",
                                        "http",
                                        "queue",
                                        "job",
                                        "repositories",
                                        "schedules",
                                        "history",
                                        "details_link_ttl_s",
                                        "slurm"});
  if (root.has("listen")) parse_listen(root.string("listen"), label + ": listen", c.host, c.port);
  c.db = root.string("db", c.db);
  if (root.has("store")) {
    c.store = root.string("store");
    // The SQLite file is `db`; `store` is only for a server the replicas share.
    if (!is_postgres_url(c.store))
      root.fail(
          "store",
          "expected a postgresql:// URL, e.g. postgresql://maxcode@db.internal/maxcode (the SQLite file is 'db')");
  }
  c.data_dir = root.string("data_dir", c.data_dir);
  c.history = root.string("history", c.history);
  read_secret_names(root, c);
  if (auto node = root.get("tls")) read_tls(*node, c);
  c.public_url = root.string("public_url", c.public_url);
  // At least a minute: a link that dies before GitHub's page is opened helps no one.
  c.details_link_ttl_s = root.integer("details_link_ttl_s", static_cast<long long>(c.details_link_ttl_s), 60);
  if (auto node = root.get("github")) read_github(*node, c);
  c.max_body_bytes = root.integer<std::size_t>("max_body_bytes", c.max_body_bytes, 1024);
  if (auto node = root.get("http")) read_http(*node, c);
  if (auto node = root.get("queue")) read_queue(*node, c);
  if (auto node = root.get("job")) read_job(*node, c);
  if (auto node = root.get("repositories")) read_repositories(*node, c);
  if (auto list = root.get("schedules")) {
    list->expect(list->value().is_array(), "an array");
    for (std::size_t i = 0; i < list->value().size(); ++i)
      c.schedules.push_back(read_schedule(list->element(i), c.schedules));
  }
  if (auto node = root.get("slurm")) read_slurm(*node, c);
  return c;
}

ServiceConfig load_service_config(const std::filesystem::path& file) {
  const std::optional<std::string> text = try_read_text(file);
  if (!text) throw ServiceConfigError(file.string() + ": cannot read the service config");
  const json document = json::parse(*text, nullptr, false);
  if (document.is_discarded()) throw ServiceConfigError(file.string() + ": not valid JSON");
  return parse_service_config(document, file.string());
}

}  // namespace maxcode::bot::service
