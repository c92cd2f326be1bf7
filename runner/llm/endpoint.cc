#include "runner/llm/endpoint.h"

#include <cctype>

namespace maxcode::llm {

std::string parse_endpoint(const std::string& base_url, Endpoint& endpoint) {
  std::string scheme;
  std::string rest;
  if (base_url.rfind("https://", 0) == 0) {
    scheme = "https";
    rest = base_url.substr(8);
  } else if (base_url.rfind("http://", 0) == 0) {
    scheme = "http";
    rest = base_url.substr(7);
  } else {
    return "expected an http:// or https:// URL";
  }
  if (rest.find_first_of("?#") != std::string::npos) {
    return "a query or fragment is not supported in a base URL";
  }
  std::size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  std::string prefix = slash == std::string::npos ? "" : rest.substr(slash);
  // Keys belong in environment variables, where they stay out of logs and reports.
  if (authority.find('@') != std::string::npos) {
    return "credentials in the URL are not supported (name an environment variable in "
           "api_key_env instead)";
  }
  if (authority.empty()) return "no host";

  std::size_t host_end = authority.size();
  if (authority.front() == '[') {
    host_end = authority.find(']');
    if (host_end == std::string::npos) return "unterminated IPv6 address";
    ++host_end;
  } else {
    host_end = authority.find(':');
    if (host_end == std::string::npos) host_end = authority.size();
  }
  if (host_end == 0 || (authority.front() == '[' && host_end <= 2)) return "no host";
  if (host_end < authority.size()) {
    std::string port = authority.substr(host_end);
    if (port.size() < 2 || port.front() != ':' || port.size() > 6) return "bad port";
    for (std::size_t i = 1; i < port.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(port[i]))) return "bad port";
    }
    if (std::stoi(port.substr(1)) > 65535 || std::stoi(port.substr(1)) == 0) return "bad port";
  }

  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  endpoint.origin = scheme + "://" + authority;
  endpoint.prefix = prefix;
  endpoint.https = scheme == "https";
  return "";
}

std::string display_url(const std::string& base_url) {
  std::size_t scheme = base_url.find("://");
  std::size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  std::size_t end = base_url.find_first_of("/?#", start);
  std::size_t at = base_url.rfind('@', end == std::string::npos ? base_url.size() : end);
  if (at == std::string::npos || at < start) return base_url;
  return base_url.substr(0, start) + base_url.substr(at + 1);
}

}  // namespace maxcode::llm
