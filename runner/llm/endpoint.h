// Where a provider's HTTP API lives: base_url split into what cpp-httplib connects to
// (scheme, host, port) and the path prefix every API path goes under.
#pragma once

#include <string>

namespace maxcode::llm {

struct Endpoint {
  std::string origin;  // "https://api.openai.com", "http://127.0.0.1:8080", "http://[::1]:9"
  std::string prefix;  // "/v1", "/proxy/openai", or "" (never a trailing '/')
  bool https = false;

  std::string url(const std::string& path) const { return origin + prefix + path; }
};

// Parses "http[s]://host[:port][/prefix]". Returns an error message for anything else
// (other schemes, credentials in the URL, a query or fragment), or "" with `endpoint` set.
std::string parse_endpoint(const std::string& base_url, Endpoint& endpoint);

// `base_url` fit to show in descriptions and errors: any "user:password@" removed.
std::string display_url(const std::string& base_url);

}  // namespace maxcode::llm
