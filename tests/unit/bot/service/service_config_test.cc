#include "bot/service/service_config.h"

#include <gtest/gtest.h>

namespace maxcode::bot::service {
namespace {

using nlohmann::json;

TEST(ServiceConfig, ReadsAFullConfig) {
  const json doc = json::parse(R"({
    "listen": "0.0.0.0:8443", "db": "/var/lib/maxcode/q.sqlite", "webhook_secret_env": "HOOK_SECRET",
    "tls": {"cert_file": "c.pem", "key_file": "k.pem"},
    "github": {"api_url": "https://ghe.example/api/v3", "app_id": 4242, "app_key_file": "app.pem",
               "git_url": "https://git.example/{owner}/{name}.git", "max_retry_wait_s": 300, "max_tries": 5},
    "history": "/var/lib/maxcode/history.sqlite",
    "store": "postgresql://maxcode@db.internal/maxcode", "store_password_env": "PG_PASS",
    "queue": {"lease_s": 90, "max_attempts": 4, "backoff_s": 5, "work_lease_s": 30},
    "http": {"header_timeout_s": 5, "request_timeout_s": 30, "keep_alive_s": 1, "max_connections": 256},
    "job": {"policy": "replay", "max_targets": 2, "labels": ["cpu"]},
    "repositories": {"Acme/Histo": {"push": true, "labels": ["gpu"], "regressions": "issue"}},
    "schedules": [{"cron": "0 3 * * *", "time_zone": "Europe/Berlin", "repository": "acme/histo"}]
  })");
  const ServiceConfig c = parse_service_config(doc, "service.json");
  EXPECT_EQ(c.host, "0.0.0.0");
  EXPECT_EQ(c.port, 8443);
  EXPECT_EQ(c.app_id, "4242");
  EXPECT_EQ(c.max_attempts, 4);
  EXPECT_EQ(c.store, "postgresql://maxcode@db.internal/maxcode");
  EXPECT_EQ(c.store_password_env, "PG_PASS");
  EXPECT_EQ(c.work_lease_s, 30);
  EXPECT_EQ(parse_service_config(json::object(), "x").store, "");  // the SQLite file `db`
  EXPECT_EQ(c.max_retry_wait_s, 300);
  EXPECT_EQ(c.max_tries, 5);
  EXPECT_EQ(c.history, "/var/lib/maxcode/history.sqlite");
  EXPECT_EQ(c.http.header_timeout_s, 5);
  EXPECT_EQ(c.http.request_timeout_s, 30);
  EXPECT_EQ(c.http.keep_alive_s, 1);
  EXPECT_EQ(c.http.max_connections, 256u);
  EXPECT_EQ(parse_service_config(json::object(), "x").http.header_timeout_s, 10);
  EXPECT_EQ(parse_service_config(json::object(), "x").max_retry_wait_s, 900);
  EXPECT_TRUE(c.repository("acme/histo").push);  // names are case-insensitive
  EXPECT_EQ(c.repository("acme/histo").labels, std::vector<std::string>{"gpu"});
  EXPECT_FALSE(c.repository("acme/other").push);
  EXPECT_EQ(c.git_url_for("acme/histo"), "https://git.example/acme/histo.git");
  ASSERT_EQ(c.schedules.size(), 1u);
  EXPECT_EQ(c.schedules[0].name, "acme/histo 0 3 * * *");
  EXPECT_EQ(parse_service_config(json::object(), "x").git_url_for("a/b"), "https://github.com/a/b.git");
}

TEST(ServiceConfig, ErrorsNameTheFileAndTheField) {
  auto expect_error = [](const std::string& text, const std::string& part) {
    try {
      parse_service_config(json::parse(text), "service.json");
      ADD_FAILURE() << text << " was accepted";
    } catch (const ServiceConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error(R"({"listn": "1:2"})", "service.json: listn: unknown field (did you mean 'listen'?)");
  expect_error(R"({"listen": "localhost"})", "listen: expected HOST:PORT");
  expect_error(R"({"queue": {"lease_s": "60"}})", "service.json: queue.lease_s: expected a number, got a string");
  expect_error(R"({"queue": {"max_attempts": 0}})", "queue.max_attempts: must be >= 1, got 0");
  expect_error(R"({"github": {"max_tries": 0}})", "github.max_tries: must be >= 1, got 0");
  expect_error(R"({"http": {"header_timeout": 5}})",
               "http.header_timeout: unknown field (did you mean 'header_timeout_s'?)");
  expect_error(R"({"http": {"max_connections": 0}})", "http.max_connections: must be >= 1, got 0");
  expect_error(R"({"github": {"max_retry_wait_s": -5}})", "github.max_retry_wait_s: must be >= 0, got -5");
  expect_error(R"({"webhook_secret_env": "my secret value"})", "webhook_secret_env: expected the name of an environment variable");
  expect_error(R"({"tls": {"cert_file": "c.pem"}})", "tls: needs both cert_file and key_file");
  expect_error(R"({"repositories": {"histo": {}}})", "repositories.histo: expected a repository as OWNER/NAME");
  expect_error(R"({"repositories": {"a/b": {"regressions": "email"}}})", "repositories.a/b.regressions: expected");
  expect_error(R"({"schedules": [{"cron": "0 3 * * *"}]})", "schedules[0]: needs exactly one of repository and installation");
  expect_error(R"({"schedules": [{"repository": "a/b"}]})", "schedules[0]: needs cron");
  expect_error(R"({"slurm": {"gpu": 1}})", "slurm.gpu: unknown field (did you mean 'gpus'?)");
  expect_error(R"({"slurm": {"gpus": -1}})", "slurm.gpus: must be >= 0, got -1");
  expect_error(R"({"slurm": {"time_limit_s": 5}})", "slurm.time_limit_s: must be >= 60, got 5");
  expect_error(R"({"slurm": {"server_url": "maxcode-head:8080"}})", "slurm.server_url: expected http(s)://HOST:PORT");
  expect_error(R"({"slurm": {"job_name_prefix": "a b"}})", "slurm.job_name_prefix: expected 1 to 40 letters");
  expect_error(R"({"slurm": {"sbatch_args": "--qos=x"}})", "slurm.sbatch_args: expected an array of strings");
  expect_error(R"({"store": "/var/lib/maxcode/q.sqlite"})", "service.json: store: expected a postgresql:// URL");
  expect_error(R"({"store_password_env": "hunter2!"})", "store_password_env: expected the name of an environment variable");
}

// Without a slurm section jobs go to pull runners; with one, even empty, to Slurm, with
// the defaults docs/service.md lists.
TEST(ServiceConfig, ReadsTheSlurmSection) {
  EXPECT_FALSE(parse_service_config(json::object(), "x").slurm.enabled);
  const SlurmConfig d = parse_service_config(json::parse(R"({"slurm": {}})"), "x").slurm;
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.gpus, 0);
  EXPECT_EQ(d.setup_s, 1800);
  EXPECT_EQ(d.time_limit_s, 21600);
  EXPECT_EQ(d.job_name_prefix, "maxcode");
  const SlurmConfig c = parse_service_config(json::parse(R"({"slurm": {
    "partition": "gpu", "gpus": 2, "setup_s": 600, "time_limit_s": 7200, "sbatch_args": ["--qos=perf"],
    "runner_args": ["--work-dir", "/scratch"], "maxcode": "/shared/bin/maxcode", "server_url": "http://head:8080",
    "output_dir": "/shared/out", "job_name_prefix": "mc-prod"}})"), "x").slurm;
  EXPECT_EQ(c.partition, "gpu");
  EXPECT_EQ(c.gpus, 2);
  EXPECT_EQ(c.setup_s, 600);
  EXPECT_EQ(c.time_limit_s, 7200);
  EXPECT_EQ(c.sbatch_args, std::vector<std::string>{"--qos=perf"});
  EXPECT_EQ(c.runner_args, (std::vector<std::string>{"--work-dir", "/scratch"}));
  EXPECT_EQ(c.maxcode, "/shared/bin/maxcode");
  EXPECT_EQ(c.server_url, "http://head:8080");
  EXPECT_EQ(c.output_dir, "/shared/out");
  EXPECT_EQ(c.job_name_prefix, "mc-prod");
}

}  // namespace
}  // namespace maxcode::bot::service
