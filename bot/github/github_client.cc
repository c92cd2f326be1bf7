#include "bot/github/github_client.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "bot/github/token_source.h"
#include "runner/util/json_io.h"

namespace maxcode::bot {

struct GithubClient::Http {
  explicit Http(const std::string& origin) : client(origin) {}
  httplib::Client client;
};

namespace {

bool idempotent(const std::string& method) {
  return method == "GET" || method == "PUT" || method == "PATCH" || method == "DELETE" || method == "HEAD";
}

std::int64_t system_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// GitHub's 422 errors come as {resource, field, code} objects, {message} objects or
// plain strings; all of them belong in the message a user reads.
std::string describe_errors(const nlohmann::json& errors) {
  if (!errors.is_array()) return "";
  std::string out;
  for (const auto& e : errors) {
    std::string item;
    if (e.is_string()) {
      item = e.get<std::string>();
    } else if (e.is_object()) {
      if (e.contains("message") && e["message"].is_string()) item = e["message"].get<std::string>();
      else {
        item = e.value("resource", std::string());
        if (e.contains("field") && e["field"].is_string()) item += "." + e["field"].get<std::string>();
        item += " " + e.value("code", std::string("invalid"));
        if (e.contains("value") && !e["value"].is_null()) item += " (" + dump_json(e["value"]) + ")";
      }
    }
    if (!item.empty()) out += (out.empty() ? "" : "; ") + item;
  }
  return out;
}

// Why a status usually happens, for people who did not write the client.
std::string hint(int status, const HttpResult& r) {
  switch (status) {
    case 401: return " (the token is invalid or expired)";
    case 403: {
      const std::string needed = r.header("x-accepted-github-permissions");
      return needed.empty() ? " (the token lacks a permission this needs)"
                            : " (the token lacks a permission; this needs " + needed + ")";
    }
    case 404: return " (not found, or the token cannot see it)";
    default: return "";
  }
}

}  // namespace

bool GithubError::mentions(const std::string& text) const {
  if (github_message.find(text) != std::string::npos) return true;
  return describe_errors(errors).find(text) != std::string::npos;
}

RateLimit GithubError::rate_limit() const { return rate_limit_of(status, headers, github_message + " " + what()); }

bool GithubError::retryable() const { return status == 0 || status >= 500 || rate_limit().limited(); }

std::string HttpResult::header(const std::string& lowercase_name) const { return header_text(headers, lowercase_name); }

std::pair<std::string, std::string> split_api_url(const std::string& url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string::npos || (url.compare(0, scheme, "https") != 0 && url.compare(0, scheme, "http") != 0))
    throw std::invalid_argument("not an http(s) URL: " + url);
  const std::size_t slash = url.find('/', scheme + 3);
  std::string origin = url.substr(0, slash);
  std::string prefix = slash == std::string::npos ? "" : url.substr(slash);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  return {origin, prefix};
}

std::string url_encode(const std::string& text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') out += static_cast<char>(c);
    else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::optional<std::string> next_link(const std::string& link_header) {
  // Entries are "<url>; rel=\"next\"" separated by commas; URLs contain no '>'.
  std::size_t at = 0;
  while ((at = link_header.find('<', at)) != std::string::npos) {
    const std::size_t close = link_header.find('>', at);
    if (close == std::string::npos) break;
    const std::size_t end = link_header.find(',', close);
    const std::string params = link_header.substr(close + 1, end == std::string::npos ? std::string::npos : end - close - 1);
    if (params.find("rel=\"next\"") != std::string::npos) return link_header.substr(at + 1, close - at - 1);
    at = close;
  }
  return std::nullopt;
}

GithubClient::GithubClient(ClientOptions options, std::shared_ptr<TokenSource> tokens)
    : options_(std::move(options)), tokens_(std::move(tokens)) {
  std::tie(origin_, path_prefix_) = split_api_url(options_.api_url);
  http_ = std::make_unique<Http>(origin_);
  const auto seconds = static_cast<time_t>(options_.timeout_s);
  http_->client.set_connection_timeout(seconds, 0);
  http_->client.set_read_timeout(seconds, 0);
  http_->client.set_write_timeout(seconds, 0);
  http_->client.set_keep_alive(true);
  // Headers and body go out in separate writes; without this, Nagle's algorithm and the
  // server's delayed ACK add ~40 ms to every request with a body.
  http_->client.set_tcp_nodelay(true);
  http_->client.enable_server_certificate_verification(true);
  if (!options_.sleep)
    options_.sleep = [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); };
  if (!options_.now) options_.now = system_now;
}

GithubClient::~GithubClient() = default;

void GithubClient::wait(double seconds, const std::string& why) {
  if (options_.log) {
    char text[64];
    std::snprintf(text, sizeof text, "%.1f", seconds);
    options_.log("github: " + why + "; waiting " + text + " s");
  }
  options_.sleep(seconds);
}

HttpResult GithubClient::send_once(const std::string& method, const std::string& path,
                                   const std::string& body, const std::string& authorization) {
  httplib::Request req;
  req.method = method;
  req.path = path_prefix_ + path;
  req.headers = {{"Accept", "application/vnd.github+json"},
                 {"X-GitHub-Api-Version", kGithubApiVersion},
                 {"User-Agent", options_.user_agent}};
  if (!authorization.empty()) req.headers.emplace("Authorization", authorization);
  if (method != "GET" && method != "DELETE") {
    req.body = body;
    req.headers.emplace("Content-Type", "application/json");
  }
  ++requests_sent_;
  HttpResult out;
  httplib::Result res = http_->client.send(req);
  if (!res) {
    out.status = 0;
    out.body = httplib::to_string(res.error());
    return out;
  }
  out.status = res->status;
  out.body = res->body;
  for (const auto& [name, value] : res->headers) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    out.headers.emplace(lower, value);
  }
  return out;
}

void GithubClient::fail(const std::string& method, const std::string& path, const HttpResult& r) {
  std::string message, docs;
  nlohmann::json errors = nullptr;
  const auto parsed = nlohmann::json::parse(r.body, nullptr, false);
  if (parsed.is_object()) {
    message = parsed.value("message", std::string());
    if (parsed.contains("errors")) errors = parsed["errors"];
  }
  if (message.empty()) message = r.body.substr(0, 300);
  std::string what = "GitHub API " + method + " " + path + ": " + std::to_string(r.status) + " " + message;
  if (const std::string details = describe_errors(errors); !details.empty()) what += ": " + details;
  what += hint(r.status, r);
  GithubError error(what, r.status, message, errors);
  error.headers = r.headers;
  throw error;
}

void GithubClient::wait_for_known_reset() {
  if (primary_reset_ <= 0) return;
  const double left = static_cast<double>(primary_reset_ - options_.now()) + 1;
  primary_reset_ = 0;
  if (left > options_.max_wait_s) {
    GithubError error("GitHub API rate limit exhausted; it resets in " + std::to_string(static_cast<long>(left)) +
                          " s, longer than the " + std::to_string(static_cast<long>(options_.max_wait_s)) +
                          " s this caller waits",
                      403, "API rate limit exceeded");
    error.headers = {{"x-ratelimit-remaining", "0"},
                     {"x-ratelimit-reset", std::to_string(options_.now() + static_cast<std::int64_t>(left) - 1)}};
    throw error;
  }
  if (left > 0) wait(left, "primary rate limit exhausted until x-ratelimit-reset");
}

bool GithubClient::waited_for_rate_limit(const std::string& method, const std::string& path, const HttpResult& r,
                                         int attempt, double backoff) {
  const RateLimit limit = rate_limit_of(r.status, r.headers, r.body);
  if (!limit.limited()) return false;
  if (limit.kind == RateLimit::Kind::kReset) {  // waited for before the next attempt (wait_for_known_reset)
    primary_reset_ = limit.reset_at;
    if (primary_reset_ - options_.now() > options_.max_wait_s) {
      primary_reset_ = 0;
      fail(method, path, r);
    }
    return true;
  }
  const double seconds =
      limit.wait_s(static_cast<double>(options_.now()), std::max(options_.secondary_wait_s, backoff));
  if (seconds > options_.max_wait_s) fail(method, path, r);
  if (attempt < options_.max_attempts) wait(seconds, limit.why());
  return true;
}

HttpResult GithubClient::request(const std::string& method, const std::string& path,
                                 const std::optional<nlohmann::json>& body,
                                 const std::string& authorization) {
  const std::string payload = body ? dump_json(*body) : "";
  bool refreshed_token = false;
  HttpResult r;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    wait_for_known_reset();  // before spending a request
    std::string auth = authorization;
    if (auth.empty() && tokens_) auth = "Bearer " + tokens_->token();
    r = send_once(method, path, payload, auth);
    if (options_.observe) options_.observe(method, path, r);
    const double backoff = options_.backoff_s * std::pow(2.0, attempt - 1);

    if (r.status == 0) {  // no response: connection refused, reset, timed out
      if (!idempotent(method) || attempt == options_.max_attempts)
        throw GithubError("GitHub API " + method + " " + path + ": no response (" + r.body + ")", 0);
      wait(backoff, "no response (" + r.body + ")");
      continue;
    }
    if (const auto until = exhausted_until(r.headers); until && r.status < 400) primary_reset_ = *until;
    if (r.status < 400) return r;

    if (waited_for_rate_limit(method, path, r, attempt, backoff)) continue;
    if (r.status == 401 && tokens_ && authorization.empty() && !refreshed_token) {
      // An installation token can be revoked before it expires: mint a new one once.
      refreshed_token = true;
      tokens_->invalidate();
      if (tokens_->is_app()) continue;
    }
    if (r.status >= 500 && idempotent(method) && attempt < options_.max_attempts) {
      wait(backoff, "server error " + std::to_string(r.status));
      continue;
    }
    fail(method, path, r);
  }
  try {
    fail(method, path, r);
  } catch (const GithubError& e) {
    GithubError error("GitHub API " + method + " " + path + ": gave up after " +
                          std::to_string(options_.max_attempts) + " attempts; last answer: " + e.what(),
                      e.status, e.github_message, e.errors);
    error.headers = e.headers;
    throw error;
  }
}

namespace {
nlohmann::json parse_body(const HttpResult& r) {
  if (r.body.empty()) return nullptr;
  return nlohmann::json::parse(r.body, nullptr, false);
}
}  // namespace

nlohmann::json GithubClient::get(const std::string& path) { return parse_body(request("GET", path, std::nullopt)); }
nlohmann::json GithubClient::post(const std::string& path, const nlohmann::json& body) {
  return parse_body(request("POST", path, body));
}
nlohmann::json GithubClient::patch(const std::string& path, const nlohmann::json& body) {
  return parse_body(request("PATCH", path, body));
}
nlohmann::json GithubClient::put(const std::string& path, const nlohmann::json& body) {
  return parse_body(request("PUT", path, body));
}
void GithubClient::del(const std::string& path) { request("DELETE", path, std::nullopt); }

nlohmann::json GithubClient::get_all(const std::string& path, int max_pages) {
  nlohmann::json all = nlohmann::json::array();
  std::string next = path;
  if (next.find("per_page=") == std::string::npos)
    next += (next.find('?') == std::string::npos ? "?" : "&") + std::string("per_page=100");
  for (int page = 0; page < max_pages && !next.empty(); ++page) {
    const HttpResult r = request("GET", next, std::nullopt);
    const nlohmann::json items = parse_body(r);
    if (!items.is_array()) throw GithubError("GitHub API GET " + next + ": expected a list", r.status);
    for (const auto& item : items) all.push_back(item);
    next.clear();
    if (auto link = next_link(r.header("link"))) {
      // Only follow links to the API we talk to: never send the token elsewhere.
      if (link->rfind(origin_ + path_prefix_ + "/", 0) != 0)
        throw GithubError("GitHub API pagination link leaves " + origin_ + path_prefix_ + ": " + *link, r.status);
      next = link->substr(origin_.size() + path_prefix_.size());
    }
  }
  return all;
}

}  // namespace maxcode::bot
