// A GitHub REST API client over cpp-httplib (HTTPS through OpenSSL).
//
// Every request carries `Accept: application/vnd.github+json`, the pinned
// `X-GitHub-Api-Version` and a User-Agent (GitHub refuses requests without one). The
// client honours GitHub's rate limits itself: a secondary limit (403/429 with
// `retry-after`, or GitHub's message without it) waits as told, or a minute and then
// exponentially longer; an exhausted primary limit (`x-ratelimit-remaining: 0`) waits
// for `x-ratelimit-reset`. Server errors and dropped connections are retried with
// exponential backoff, but only for idempotent methods: a POST that failed may still
// have taken effect, so its caller decides (see RepoApi::create_pull). Errors come back
// as GithubError with GitHub's message and its validation errors in the text.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bot/github/rate_limit.h"
#include "runner/util/error.h"

namespace maxcode::bot {

inline constexpr const char* kGithubApiVersion = "2022-11-28";

class TokenSource;
class GithubError : public Error {
 public:
  GithubError(const std::string& what, int status, std::string github_message = "",
              nlohmann::json errors = nullptr)
      : Error(what), status(status), github_message(std::move(github_message)), errors(std::move(errors)) {}
  int status;                  // HTTP status; 0 when no response arrived
  std::string github_message;  // GitHub's "message"
  nlohmann::json errors;       // GitHub's "errors" (422), or null
  // The answer's headers (names lowercased): retry-after and x-ratelimit-* tell a caller
  // that defers the work how long GitHub asks it to wait.
  HttpHeaders headers;
  // True when GitHub's 422 says `text` in its message or one of its errors.
  bool mentions(const std::string& text) const;
  // What the answer says of GitHub's rate limits (bot/github/rate_limit.h), from its
  // status, headers and message.
  RateLimit rate_limit() const;
  // True when GitHub's answer says the failure passes with time: a rate limit, a server
  // error (5xx) or no answer (status 0). A 403 of a permission, a 404 or a 422 does not.
  // Computed from the fields, since the client sets `headers` after construction.
  bool retryable() const override;
};

struct HttpResult;

struct ClientOptions {
  std::string api_url = "https://api.github.com";  // GitHub Enterprise: https://HOST/api/v3
  std::string user_agent = "maxcode";
  int max_attempts = 6;             // per request, rate-limit waits and retries included
  double max_wait_s = 900;          // a rate limit that asks for longer fails instead
  double backoff_s = 1;             // first retry delay after a server error; doubles
  double secondary_wait_s = 60;     // GitHub: wait at least a minute without retry-after
  double timeout_s = 30;            // connect and read
  // How the client waits (tests pass one that records and returns).
  std::function<void(double seconds)> sleep;
  // Where it says why it waits or retries; none = silent.
  std::function<void(const std::string&)> log;
  // The clock for x-ratelimit-reset (seconds since the epoch).
  std::function<std::int64_t()> now;
  // Told of every answer (or of no answer: status 0) with the request's method and path;
  // the service counts API calls and the rate limit left from it.
  std::function<void(const std::string& method, const std::string& path, const HttpResult&)> observe;
};

struct HttpResult {
  int status = 0;
  HttpHeaders headers;  // names lowercased
  std::string body;
  std::string header(const std::string& lowercase_name) const;
};

class GithubClient {
 public:
  // `tokens` may be null for unauthenticated calls.
  GithubClient(ClientOptions options, std::shared_ptr<TokenSource> tokens);
  ~GithubClient();
  GithubClient(const GithubClient&) = delete;
  GithubClient& operator=(const GithubClient&) = delete;

  // `path` is relative to the API root ("/repos/o/r/pulls?state=all"). A 2xx answer
  // returns its parsed body (null when empty); anything else throws GithubError.
  nlohmann::json get(const std::string& path);
  nlohmann::json post(const std::string& path, const nlohmann::json& body);
  nlohmann::json patch(const std::string& path, const nlohmann::json& body);
  nlohmann::json put(const std::string& path, const nlohmann::json& body);
  void del(const std::string& path);

  // Every item of a list endpoint, following `Link: <...>; rel="next"` (per_page=100
  // unless the path sets it). Links to another host are refused: the token must not
  // travel there. Stops after `max_pages`.
  nlohmann::json get_all(const std::string& path, int max_pages = 100);

  // One request with the retry policy above. `authorization` overrides the token
  // source's header value (the App JWT exchange uses it).
  HttpResult request(const std::string& method, const std::string& path,
                     const std::optional<nlohmann::json>& body,
                     const std::string& authorization = "");

  int requests_sent() const { return requests_sent_; }
  const ClientOptions& options() const { return options_; }

 private:
  HttpResult send_once(const std::string& method, const std::string& path,
                       const std::string& body, const std::string& authorization);
  void wait(double seconds, const std::string& why);
  [[noreturn]] void fail(const std::string& method, const std::string& path, const HttpResult& r);
  // A primary limit already known to be exhausted: waits for its reset, or fails at once
  // when that is further off than this caller waits.
  void wait_for_known_reset();
  // An answer that is a rate limit (403/429 with retry-after, an exhausted primary limit,
  // or a secondary limit without retry-after): waits as GitHub asks and returns true (try
  // again), or fails when the wait is longer than this caller's. False: not a rate limit.
  bool waited_for_rate_limit(const std::string& method, const std::string& path, const HttpResult& r, int attempt,
                             double backoff);

  ClientOptions options_;
  std::shared_ptr<TokenSource> tokens_;
  std::string origin_;       // scheme://host[:port]
  std::string path_prefix_;  // "/api/v3" for GitHub Enterprise, else empty
  struct Http;
  std::unique_ptr<Http> http_;
  int requests_sent_ = 0;
  std::int64_t primary_reset_ = 0;  // when an exhausted primary limit resets (0 = not exhausted)
};

// "<https://api.github.com/x?page=2>; rel=\"next\", <...>; rel=\"last\"" -> the next URL.
std::optional<std::string> next_link(const std::string& link_header);

// Splits "https://host:8443/api/v3" into origin and path prefix. Throws
// std::invalid_argument for anything but http(s) URLs.
std::pair<std::string, std::string> split_api_url(const std::string& url);

// Percent-encodes one path segment or query value (so "maxcode/a/b" stays one segment).
std::string url_encode(const std::string& text);

}  // namespace maxcode::bot
