#include "bot/service/server.h"

#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <iostream>
#include <set>
#include <thread>

#include "bot/service/operations/dashboard.h"
#include "bot/service/events/event_router.h"
#include "bot/service/app/github_access.h"
#include "bot/service/intake/http_server.h"
#include "bot/service/operations/job_page.h"
#include "bot/service/queue/job_queue.h"
#include "bot/service/results/job_report.h"
#include "bot/service/operations/metric_catalog.h"
#include "bot/service/operations/metrics.h"
#include "bot/service/schedule/regression_report.h"
#include "bot/service/results/result_delivery.h"
#include "bot/service/runners/runner_protocol.h"
#include "bot/service/schedule/scheduler.h"
#include "bot/service/operations/service_log.h"
#include "bot/service/runners/slurm_dispatcher.h"
#include "bot/service/intake/webhook_intake.h"
#include "bot/service/intake/webhook_signature.h"
#include "runner/report/trend_page.h"
#include "runner/store/history.h"
#include "runner/util/json_io.h"

namespace maxcode::bot::service {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A worker thread that runs `step` whenever woken, or every `period` anyway.
class Worker {
 public:
  Worker(std::string name, std::chrono::milliseconds period, std::function<void()> step, ServiceLog& log)
      : name_(std::move(name)), period_(period), step_(std::move(step)), log_(log) {}
  void start() {
    thread_ = std::thread([this] { loop(); });
  }
  void wake() {
    std::lock_guard lock(mutex_);
    woken_ = true;
    cv_.notify_one();
  }
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      cv_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  void loop() {
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        cv_.wait_for(lock, period_, [&] { return woken_ || stopping_; });
        if (stopping_) return;
        woken_ = false;
      }
      try {
        step_();
      } catch (const std::exception& e) {
        log_(name_, std::string("step failed: ") + e.what());
      }
    }
  }
  std::string name_;
  std::chrono::milliseconds period_;
  std::function<void()> step_;
  ServiceLog& log_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool woken_ = true, stopping_ = false;
  std::thread thread_;
};

std::string bearer_or_query(const httplib::Request& req) {
  const std::string auth = req.get_header_value("Authorization");
  if (auth.rfind("Bearer ", 0) == 0) return auth.substr(7);
  return req.has_param("token") ? req.get_param_value("token") : "";
}

}  // namespace

// The store `store` names (PostgreSQL, shared by replicas), else the SQLite file `db`.
std::unique_ptr<SqlDatabase> open_store(const ServiceConfig& config, const ServeSecrets& secrets) {
  if (!config.store.empty()) return open_sql_database(config.store, secrets.store_password, "store");
  return open_sql_database(config.db.string(), "", "db");
}

// For the HTTP threads and the workers; each is a PostgreSQL backend process, and on the
// 2-core test machine more of them only added context switches.
constexpr int kStoreConnections = 4;

QueueOptions queue_options(const ServiceConfig& config) {
  QueueOptions o{config.lease_s, config.max_attempts, config.backoff_s, nullptr};
  o.work_lease_s = config.work_lease_s;
  return o;
}

struct Service::State {
  ServiceConfig config;
  ServeSecrets secrets;
  ServiceLog log;
  Metrics metrics;
  JobQueue queue;
  DeferredWork deferred;
  GithubAccess github;
  ServiceContext context;
  RunnerProtocol runners;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<LinkSigner> links;
  std::unique_ptr<httplib::Server> http;
  int port = 0;

  std::mutex report_mutex;
  std::deque<std::int64_t> report_queue;
  std::unique_ptr<Worker> events, deliveries, reporter, housekeeper;
  // The Slurm backend (slurm in the config): its dispatcher and the worker that runs it.
  std::unique_ptr<SlurmDispatcher> slurm;
  std::unique_ptr<Worker> slurm_worker;

  State(ServiceConfig c, ServeSecrets s)
      : config(std::move(c)),
        secrets(std::move(s)),
        // PostgreSQL: a few connections, so that webhook threads do not wait in line
        // for each other's round trips (sql_pool.h).
        queue(
            open_store(config, secrets), [c = config, s = secrets] { return open_store(c, s); },
            config.store.empty() ? 1 : kStoreConnections, queue_options(config)),
        deferred(open_store(config, secrets), [this] { return queue.now(); }),
        github(config, metrics, log),
        context{.config = config,
                .queue = queue,
                .metrics = metrics,
                .github = github,
                .log = log,
                .data_dir = config.data_dir.empty() ? fs::path(config.db.string() + ".d") : config.data_dir},
        runners(context, secrets.runner_token) {
    context.deferred = &deferred;
    context.history = config.history.empty() ? context.data_dir / "history.sqlite" : config.history;
  }

  // The steps of Service::Service, in order.
  void open();
  void start_workers();
  void start_slurm();
  void wire_context();
  void make_http_server();
  void add_routes();
  // The routes, by who calls them.
  void add_webhook_route();
  void add_health_routes();
  void add_admin_routes();
};

// The data directory, the job pages' link key, the metrics declared, the scheduler.
void Service::State::open() {
  State& s = *this;
  fs::create_directories(s.context.data_dir);
  // The key of the job pages' signed links, beside the results it guards (link_signature.h).
  s.links = std::make_unique<LinkSigner>(LinkSigner::from_key_file(s.context.data_dir / "job-links.key", s.config.details_link_ttl_s));
  s.context.links = s.links.get();
  declare_service_metrics(s.metrics);  // every series an alert may need, at 0 from the start
  s.scheduler = std::make_unique<Scheduler>(s.context);
}

// The workers: webhook deliveries to their handlers, results to PRs, reports to
// GitHub, and housekeeping (expired leases, the scheduler's tick).
void Service::State::start_workers() {
  State& s = *this;
  s.events = std::make_unique<Worker>("events", std::chrono::milliseconds(1000), [&s] {
    while (route_pending(s.context) > 0) {
    }
  }, s.log);
  s.deliveries = std::make_unique<Worker>(
      "deliver", std::chrono::milliseconds(2000),
      [&s] {
        for (const Job& j : s.queue.jobs("", {JobState::kDelivering}, 100)) {
          if (s.deferred.waiting("deliver", std::to_string(j.id))) continue;  // GitHub asked for time
          // Replicas: one delivers a job's results (two would race to open its PR).
          const auto lease = s.queue.leases.take_results(j.id);
          if (!lease) continue;
          if (deliver_job_results(s.context, j.id) != DeliveryStep::kFinished)
            s.queue.leases.release_results(j.id, *lease);
        }
      },
      s.log);
  s.reporter = std::make_unique<Worker>("report", std::chrono::milliseconds(1000), [&s] {
    for (;;) {
      std::int64_t id;
      {
        std::lock_guard lock(s.report_mutex);
        if (s.report_queue.empty()) break;
        id = s.report_queue.front();
        s.report_queue.pop_front();
      }
      report_job(s.context, id);
    }
    // Reports GitHub deferred, whose time has come (they survive restarts in the store).
    // take_due: of replicas sharing the store, one does each item.
    for (const auto& item : s.deferred.take_due("report", s.config.work_lease_s)) report_job(s.context, std::stoll(item.key));
    for (const auto& item : s.deferred.take_due("regressions", s.config.work_lease_s)) {
      try {
        report_regressions(s.context, std::stoll(item.key));
        s.deferred.remove("regressions", item.key);
      } catch (const std::exception& e) {
        if (!defer_after_failure(s.context, "regressions", item.key, e))
          s.log("regression", "job " + item.key + ": the regressions could not be reported: " + e.what());
      }
    }
  }, s.log);
  s.housekeeper = std::make_unique<Worker>("housekeeping", std::chrono::milliseconds(1000), [&s] {
    for (std::int64_t id : s.queue.expire_leases()) {
      s.metrics.count("maxcode_leases_expired_total", "jobs whose runner stopped sending heartbeats");
      const auto job = s.queue.job(id);
      s.log("queue",
            "job " + std::to_string(id) + ": lease expired; now " + (job ? job_state_name(job->state) : "gone"));
      s.context.report(id);
      s.runners.notify();
    }
    s.scheduler->tick();
  }, s.log);
}

// The Slurm backend, when configured: a dispatcher and its worker; a cancelled job's
// batch job is cancelled too.
void Service::State::start_slurm() {
  State& s = *this;
  if (s.config.slurm.enabled) {
    s.slurm = std::make_unique<SlurmDispatcher>(s.context, s.secrets.runner_token, [&s] {
      const std::string host = s.config.host == "0.0.0.0" || s.config.host == "::" ? "127.0.0.1" : s.config.host;
      return std::string(s.config.tls_cert.empty() ? "http" : "https") + "://" + host + ":" + std::to_string(s.port);
    });
    // Every 2 s: a backoff that passes, or a batch job that ended without its job, is
    // seen without a wake-up.
    s.slurm_worker = std::make_unique<Worker>("slurm", std::chrono::milliseconds(2000), [&s] { s.slurm->step(); }, s.log);
    s.context.job_cancelled = [&s](std::int64_t id) {
      try {
        s.slurm->cancel(id);
      } catch (const std::exception& e) {
        s.log("slurm", "job " + std::to_string(id) + ": " + e.what() + " (the next pass cancels it)");
      }
    };
  }
}

// What handlers call when jobs change: runners, deliveries and Slurm woken; a job's
// report queued (once per job) for the reporter.
void Service::State::wire_context() {
  State& s = *this;
  s.context.jobs_changed = [&s] {
    s.runners.notify();
    s.deliveries->wake();
    if (s.slurm_worker) s.slurm_worker->wake();
  };
  s.context.report = [&s](std::int64_t id) {
    {
      std::lock_guard lock(s.report_mutex);
      // One update per job is enough: it reports the job as it is when it runs.
      if (std::find(s.report_queue.begin(), s.report_queue.end(), id) == s.report_queue.end()) s.report_queue.push_back(id);
    }
    s.reporter->wake();
  };
}

// The HTTP(S) server with its limits, error handler and logger (http_server.h).
void Service::State::make_http_server() {
  State& s = *this;
  if (!s.config.tls_cert.empty()) {
    s.http = std::make_unique<httplib::SSLServer>(s.config.tls_cert.c_str(), s.config.tls_key.c_str());
    const HttpLimits limits = s.config.http;
    s.http->new_task_queue = [limits] { return new_elastic_task_queue(limits); };
  } else {
    // Deadlines per request and a thread per connection on demand (http_server.h):
    // slow clients cannot take the threads that /healthz and webhooks need.
    s.http = std::make_unique<HttpServer>(s.config.http);
  }
  httplib::Server& http = *s.http;
  if (!http.is_valid()) throw ServiceConfigError("tls: cannot load the certificate or key");
  // GitHub sends at most 25 MB; runner uploads are held to the same limit. httplib
  // reads and discards a longer body and answers 413 (so the sender sees the answer).
  http.set_payload_max_length(s.config.max_body_bytes);
  // Per read; the plain server also bounds the whole request (http.header_timeout_s).
  http.set_read_timeout(std::max<time_t>(1, static_cast<time_t>(s.config.http.header_timeout_s)), 0);
  http.set_keep_alive_max_count(1000);
  http.set_keep_alive_timeout(std::max<time_t>(1, static_cast<time_t>(s.config.http.keep_alive_s)));
  // An exception from a handler is a bug or a bad request that a handler did not
  // foresee: the client gets 400 (BadRequest) or 500 with a JSON error, and never
  // httplib's default, the exception's text in an EXCEPTION_WHAT header.
  http.set_exception_handler([&s](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    res.status = 500;
    try {
      std::rethrow_exception(ep);
    } catch (const BadRequest& e) {
      res.status = 400;
      what = e.what();
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    s.metrics.count("maxcode_http_errors_total", "requests that ended in an exception", {{"status", std::to_string(res.status)}});
    s.log("http", req.method + " " + req.path + ": " + std::to_string(res.status) + ": " + what);
    res.headers.erase("EXCEPTION_WHAT");
    res.set_content(dump_json(nlohmann::json{{"error", res.status == 400 ? what : "internal error (see the service log)"}}) + "\n",
                    "application/json");
  });
  // httplib writes headers and body separately: without TCP_NODELAY, Nagle's algorithm
  // and the client's delayed ACK hold each answer ~40 ms.
  http.set_tcp_nodelay(true);
  http.set_logger([&s](const httplib::Request& req, const httplib::Response& res) {
    if (res.status == 413 && req.path == "/webhooks/github") {
      s.metrics.count("maxcode_webhooks_total", "webhook requests by event and result",
                      {{"event", "unverified"}, {"result", "too-large"}});
      s.log("webhook", "refused a body over " + std::to_string(s.config.max_body_bytes) + " bytes (413)");
    }
  });
}

// Every route: webhooks, health, metrics, the admin pages and API, the runner
// protocol, the job pages.
void Service::State::add_routes() {
  add_webhook_route();
  add_health_routes();
  add_admin_routes();
  runners.add_routes(*http);
  add_job_page_routes(*http, context, *links, {secrets.webhook_secret, secrets.admin_token, secrets.runner_token});
}

// GitHub's deliveries: checked, stored and answered at once; the events worker acts on them.
void Service::State::add_webhook_route() {
  State& s = *this;
  s.http->Post("/webhooks/github", [&s](const httplib::Request& req, httplib::Response& res) {
    const auto start = Clock::now();
    WebhookRequest w{req.get_header_value("X-GitHub-Event"), req.get_header_value("X-GitHub-Delivery"),
                     req.get_header_value("X-Hub-Signature-256"), req.body};
    const WebhookAnswer a = accept_webhook(s.context, s.secrets.webhook_secret, w);
    res.status = a.status;
    res.set_content(a.message + "\n", "text/plain");
    // Unsigned requests do not get to pick label values.
    const std::string event = a.status == 401 || a.result == "no-event" ? "unverified" : w.event;
    s.metrics.count("maxcode_webhooks_total", "webhook requests by event and result", {{"event", event}, {"result", a.result}});
    s.metrics.observe("maxcode_webhook_seconds", "time to answer a webhook request", {},
                      std::chrono::duration<double>(Clock::now() - start).count());
    if (a.status == 202) s.events->wake();
  });
}

// For the operator's monitoring: liveness (the store answers) and Prometheus metrics.
void Service::State::add_health_routes() {
  State& s = *this;
  httplib::Server& http = *s.http;
  http.Get("/healthz", [&s](const httplib::Request&, httplib::Response& res) {
    try {
      s.queue.counts_by_state();
      res.set_content("ok\n", "text/plain");
    } catch (const std::exception& e) {
      res.status = 503;
      res.set_content(std::string("store unavailable: ") + e.what() + "\n", "text/plain");
    }
  });
  http.Get("/metrics", [&s](const httplib::Request&, httplib::Response& res) {
    for (JobState state : kJobStates)
      s.metrics.set("maxcode_jobs", "jobs by state", {{"state", job_state_name(state)}}, 0);
    for (const auto& [state, n] : s.queue.counts_by_state())
      s.metrics.set("maxcode_jobs", "jobs by state", {{"state", state}}, n);
    const auto runners = s.queue.runners.list();
    int live = 0;
    for (const auto& r : runners)
      if (s.queue.now() - r.last_seen < s.config.lease_s) ++live;
    s.metrics.set("maxcode_runners_live", "runners heard from within one lease period", {}, live);
    res.set_content(s.metrics.text(), "text/plain; version=0.0.4");
  });
}

// The operator's pages and API, behind the admin token: the dashboard, the trend page,
// the jobs and runners as JSON.
void Service::State::add_admin_routes() {
  State& s = *this;
  httplib::Server& http = *s.http;
  auto admin = [&s](const httplib::Request& req, httplib::Response& res) {
    if (s.secrets.admin_token.empty() || !constant_time_equal(bearer_or_query(req), s.secrets.admin_token)) {
      res.status = 403;
      res.set_content("admin token required (?token= or Authorization: Bearer)\n", "text/plain");
      return false;
    }
    return true;
  };
  http.Get("/", [&s, admin](const httplib::Request& req, httplib::Response& res) {
    if (!admin(req, res)) return;
    const double now = s.queue.now();
    // Runners heard from within a lease period, as maxcode_runners_live counts them.
    res.set_content(render_dashboard(
                        s.queue.jobs("", {}, 200), s.queue.runners.list(), s.queue.counts_by_state(), now,
                        [&s, now](const Job& j) { return job_page_link(*s.links, j.id, now); }, s.config.lease_s),
                    "text/html; charset=utf-8");
  });
  http.Get("/trend", [&s, admin](const httplib::Request& req, httplib::Response& res) {
    if (!admin(req, res)) return;
    std::vector<NightResult> rows;
    if (fs::exists(s.context.history)) rows = HistoryStore(s.context.history).all();
    res.set_content(render_trend_page(rows, find_regressions(rows)), "text/html; charset=utf-8");
  });
  http.Get("/api/jobs", [&s, admin](const httplib::Request& req, httplib::Response& res) {
    if (!admin(req, res)) return;
    nlohmann::json jobs = nlohmann::json::array(), runners = nlohmann::json::array();
    for (const Job& j : s.queue.jobs(req.has_param("repo") ? req.get_param_value("repo") : "", {}, 500))
      jobs.push_back(j.to_json());
    for (const RunnerInfo& r : s.queue.runners.list())
      runners.push_back({{"name", r.name}, {"labels", r.labels}, {"last_seen", r.last_seen}, {"job", r.job_id}});
    res.set_content(dump_json(nlohmann::json{{"counts", s.queue.counts_by_state()}, {"jobs", jobs}, {"runners", runners}}, 2),
                    "application/json");
  });
}

Service::Service(ServiceConfig config, ServeSecrets secrets)
    : state_(std::make_unique<State>(std::move(config), std::move(secrets))) {
  state_->open();
  state_->start_workers();
  state_->start_slurm();
  state_->wire_context();
  state_->make_http_server();
  state_->add_routes();
}

Service::~Service() { stop(); }

int Service::bind() {
  State& s = *state_;
  s.port = s.config.port == 0 ? s.http->bind_to_any_port(s.config.host) : (s.http->bind_to_port(s.config.host, s.config.port) ? s.config.port : -1);
  if (s.port < 0) throw ServiceConfigError("listen: cannot bind " + s.config.host + ":" + std::to_string(s.config.port));
  if (auto* plain = dynamic_cast<HttpServer*>(s.http.get())) plain->widen_backlog();
  return s.port;
}

void Service::serve() {
  State& s = *state_;
  s.events->start();
  s.deliveries->start();
  s.reporter->start();
  s.housekeeper->start();
  if (s.slurm_worker) s.slurm_worker->start();
  // Jobs that were delivering or queued when the last process stopped need their
  // comment and check run brought up to date.
  for (const Job& j : s.queue.jobs("", {JobState::kQueued, JobState::kRunning, JobState::kDelivering}, 1000))
    s.context.report(j.id);
  s.log("serve", std::string("listening on ") + (s.config.tls_cert.empty() ? "http" : "https") + "://" + s.config.host + ":" +
                     std::to_string(s.port) + " (store " + s.queue.describe_store() + ")");
  s.http->listen_after_bind();
}

void Service::stop() {
  State& s = *state_;
  if (!s.http) return;
  s.runners.stop();
  s.http->stop();
  for (auto* w : {s.events.get(), s.deliveries.get(), s.reporter.get(), s.housekeeper.get(), s.slurm_worker.get()})
    if (w) w->stop();
}

int run_service(const ServiceConfig& config, const ServeSecrets& secrets) {
  // Block the stop signals in every thread; the main thread takes them with sigwait.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  try {
    Service service(config, secrets);
    service.bind();
    std::thread server([&] { service.serve(); });
    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::cerr << "maxcode serve: " << (sig == SIGTERM ? "SIGTERM" : "SIGINT") << ", shutting down\n";
    service.stop();
    server.join();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "maxcode serve: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace maxcode::bot::service
