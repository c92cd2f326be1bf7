#include "bot/service/service_config.h"
#include "bot/service/queue/sql_database.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "bot/delivery/deliver.h"
#include "runner/util/files.h"
#include "runner/util/json_fields.h"
#include "runner/util/json_io.h"

namespace maxcode::bot::service {

namespace {

using nlohmann::json;

// One value of the document and where it sits, for checked access and errors.
struct Field {
  const json& value;
  std::string path;
  const std::string& label;

  [[noreturn]] void fail(const std::string& problem) const {
    throw ServiceConfigError(label + ": " + (path.empty() ? "" : path + ": ") + problem);
  }
  void expect(bool ok, const char* what) const {
    if (!ok) fail(std::string("expected ") + what + ", got " + describe_type(value));
  }
  // Checks that the object has only `known` fields.
  void object(const std::vector<std::string_view>& known) const {
    expect(value.is_object(), "an object");
    for (const auto& [key, _] : value.items())
      if (std::find(known.begin(), known.end(), key) == known.end())
        Field{value[key], path.empty() ? key : path + "." + key, label}.fail("unknown field; " + suggest_field(key, known));
  }
  bool has(const std::string& name) const { return value.contains(name); }
  Field at(const std::string& name) const { return {value.at(name), path.empty() ? name : path + "." + name, label}; }
  std::string string() const {
    expect(value.is_string(), "a string");
    return value.get<std::string>();
  }
  bool boolean() const {
    expect(value.is_boolean(), "true or false");
    return value.get<bool>();
  }
  double number(double min) const {
    expect(value.is_number(), "a number");
    const double v = value.get<double>();
    if (!(v >= min)) fail("must be at least " + dump_json(json(min)));
    return v;
  }
  int integer(int min) const {
    expect(value.is_number_integer(), "an integer");
    const auto v = value.get<long long>();
    if (v < min || v > 1'000'000'000) fail("must be between " + std::to_string(min) + " and 1000000000");
    return static_cast<int>(v);
  }
  std::vector<std::string> strings() const {
    expect(value.is_array(), "an array of strings");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < value.size(); ++i) out.push_back(Field{value[i], path + "[" + std::to_string(i) + "]", label}.string());
    return out;
  }
};

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
  Field root{document, "", label};
  root.object({"listen", "db", "store", "store_password_env", "data_dir", "webhook_secret_env", "admin_token_env", "runner_token_env", "tls",
               "public_url", "github", "max_body_bytes", "http", "queue", "job", "repositories", "schedules", "history",
               "details_link_ttl_s", "slurm"});
  if (root.has("listen")) parse_listen(root.at("listen").string(), label + ": listen", c.host, c.port);
  if (root.has("db")) c.db = root.at("db").string();
  if (root.has("store")) {
    c.store = root.at("store").string();
    // The SQLite file is `db`; `store` is only for a server the replicas share.
    if (!is_postgres_url(c.store))
      root.at("store").fail("expected a postgresql:// URL, e.g. postgresql://maxcode@db.internal/maxcode (the SQLite file is 'db')");
  }
  if (root.has("data_dir")) c.data_dir = root.at("data_dir").string();
  if (root.has("history")) c.history = root.at("history").string();
  for (auto [name, target] : {std::pair<const char*, std::string*>{"webhook_secret_env", &c.webhook_secret_env},
                              {"admin_token_env", &c.admin_token_env},
                              {"runner_token_env", &c.runner_token_env},
                              {"store_password_env", &c.store_password_env}})
    if (root.has(name)) {
      *target = root.at(name).string();
      if (!is_env_name(*target)) root.at(name).fail("expected the name of an environment variable (the secret is never in this file)");
    }
  if (root.has("tls")) {
    Field tls = root.at("tls");
    tls.object({"cert_file", "key_file"});
    if (!tls.has("cert_file") || !tls.has("key_file")) tls.fail("needs both cert_file and key_file");
    c.tls_cert = tls.at("cert_file").string();
    c.tls_key = tls.at("key_file").string();
  }
  if (root.has("public_url")) c.public_url = root.at("public_url").string();
  // At least a minute: a link that dies before GitHub's page is opened helps no one.
  if (root.has("details_link_ttl_s")) c.details_link_ttl_s = root.at("details_link_ttl_s").integer(60);
  if (root.has("github")) {
    Field g = root.at("github");
    g.object({"api_url", "app_id", "app_key_file", "git_url", "max_retry_wait_s", "max_tries"});
    if (g.has("max_retry_wait_s")) c.max_retry_wait_s = g.at("max_retry_wait_s").number(0);
    if (g.has("max_tries")) c.max_tries = g.at("max_tries").integer(1);
    if (g.has("api_url")) c.api_url = g.at("api_url").string();
    if (g.has("app_id")) {
      const Field id = g.at("app_id");
      c.app_id = id.value.is_number_integer() ? std::to_string(id.integer(1)) : id.string();
    }
    if (g.has("app_key_file")) c.app_key_file = g.at("app_key_file").string();
    if (g.has("git_url")) c.git_url = g.at("git_url").string();
  }
  if (root.has("max_body_bytes")) c.max_body_bytes = static_cast<std::size_t>(root.at("max_body_bytes").integer(1024));
  if (root.has("http")) {
    Field h = root.at("http");
    h.object({"header_timeout_s", "request_timeout_s", "keep_alive_s", "max_connections"});
    if (h.has("header_timeout_s")) c.http.header_timeout_s = h.at("header_timeout_s").number(0.1);
    if (h.has("request_timeout_s")) c.http.request_timeout_s = h.at("request_timeout_s").number(0.1);
    if (h.has("keep_alive_s")) c.http.keep_alive_s = h.at("keep_alive_s").number(0.1);
    if (h.has("max_connections")) c.http.max_connections = static_cast<std::size_t>(h.at("max_connections").integer(1));
  }
  if (root.has("queue")) {
    Field q = root.at("queue");
    q.object({"lease_s", "max_attempts", "backoff_s", "long_poll_s", "work_lease_s"});
    if (q.has("work_lease_s")) c.work_lease_s = q.at("work_lease_s").number(1);
    if (q.has("lease_s")) c.lease_s = q.at("lease_s").number(1);
    if (q.has("max_attempts")) c.max_attempts = q.at("max_attempts").integer(1);
    if (q.has("backoff_s")) c.backoff_s = q.at("backoff_s").number(0);
    if (q.has("long_poll_s")) c.long_poll_s = q.at("long_poll_s").number(0);
  }
  if (root.has("job")) {
    Field j = root.at("job");
    j.object({"policy", "max_targets", "budget", "labels"});
    if (j.has("policy")) c.policy = j.at("policy").string();
    if (j.has("max_targets")) c.max_targets = j.at("max_targets").integer(1);
    if (j.has("budget")) {
      j.at("budget").expect(j.at("budget").value.is_object(), "an object");
      c.budget = j.at("budget").value;
    }
    if (j.has("labels")) c.labels = j.at("labels").strings();
  }
  if (root.has("repositories")) {
    Field repos = root.at("repositories");
    repos.expect(repos.value.is_object(), "an object of OWNER/NAME -> settings");
    for (const auto& [name, _] : repos.value.items()) {
      Field r = repos.at(name);
      if (!is_full_name(name)) r.fail("expected a repository as OWNER/NAME");
      r.object({"push", "policy", "labels", "regressions"});
      RepositoryConfig rc;
      if (r.has("push")) rc.push = r.at("push").boolean();
      if (r.has("policy")) rc.policy = r.at("policy").string();
      if (r.has("labels")) rc.labels = r.at("labels").strings();
      if (r.has("regressions")) {
        rc.regressions = r.at("regressions").string();
        if (rc.regressions != "issue" && rc.regressions != "check-run" && rc.regressions != "none")
          r.at("regressions").fail("expected \"issue\", \"check-run\" or \"none\"");
      }
      c.repositories[lower(name)] = rc;
    }
  }
  if (root.has("schedules")) {
    Field list = root.at("schedules");
    list.expect(list.value.is_array(), "an array");
    for (std::size_t i = 0; i < list.value.size(); ++i) {
      Field s{list.value[i], list.path + "[" + std::to_string(i) + "]", label};
      s.object({"name", "cron", "time_zone", "repository", "installation"});
      ScheduleConfig sc;
      if (!s.has("cron")) s.fail("needs cron (five fields: minute hour day-of-month month day-of-week)");
      sc.cron = s.at("cron").string();
      if (s.has("time_zone")) sc.time_zone = s.at("time_zone").string();
      if (s.has("repository")) {
        sc.repository = s.at("repository").string();
        if (!is_full_name(sc.repository)) s.at("repository").fail("expected OWNER/NAME");
      }
      if (s.has("installation")) {
        const Field inst = s.at("installation");
        sc.installation = inst.value.is_number_integer() ? std::to_string(inst.integer(1)) : inst.string();
      }
      if (sc.repository.empty() == sc.installation.empty()) s.fail("needs exactly one of repository and installation");
      sc.name = s.has("name") ? s.at("name").string() : (sc.repository.empty() ? "installation " + sc.installation : sc.repository) + " " + sc.cron;
      for (const auto& other : c.schedules)
        if (other.name == sc.name) s.fail("a second schedule named '" + sc.name + "'");
      c.schedules.push_back(sc);
    }
  }
  if (root.has("slurm")) {
    Field f = root.at("slurm");
    f.object({"partition", "gpus", "setup_s", "time_limit_s", "sbatch_args", "runner_args", "maxcode", "server_url",
              "output_dir", "job_name_prefix"});
    SlurmConfig& sc = c.slurm;
    sc.enabled = true;
    if (f.has("partition")) sc.partition = f.at("partition").string();
    if (f.has("gpus")) sc.gpus = f.at("gpus").integer(0);
    if (f.has("setup_s")) sc.setup_s = f.at("setup_s").number(0);
    // At least a minute: Slurm's time limits are in minutes.
    if (f.has("time_limit_s")) sc.time_limit_s = f.at("time_limit_s").number(60);
    if (f.has("sbatch_args")) sc.sbatch_args = f.at("sbatch_args").strings();
    if (f.has("runner_args")) sc.runner_args = f.at("runner_args").strings();
    if (f.has("maxcode")) sc.maxcode = f.at("maxcode").string();
    if (f.has("server_url")) {
      sc.server_url = f.at("server_url").string();
      if (sc.server_url.rfind("http://", 0) != 0 && sc.server_url.rfind("https://", 0) != 0)
        f.at("server_url").fail("expected http(s)://HOST:PORT, the service as the cluster's nodes reach it");
    }
    if (f.has("output_dir")) sc.output_dir = f.at("output_dir").string();
    if (f.has("job_name_prefix")) {
      sc.job_name_prefix = f.at("job_name_prefix").string();
      // Part of a Slurm job name that squeue is asked about: letters, digits, - and _.
      if (sc.job_name_prefix.empty() || sc.job_name_prefix.size() > 40 ||
          !std::all_of(sc.job_name_prefix.begin(), sc.job_name_prefix.end(),
                       [](unsigned char ch) { return std::isalnum(ch) || ch == '-' || ch == '_'; }))
        f.at("job_name_prefix").fail("expected 1 to 40 letters, digits, - or _");
    }
  }
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
