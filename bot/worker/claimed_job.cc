#include "bot/worker/claimed_job.h"

#include <algorithm>
#include <cctype>

#include "runner/util/json_io.h"

namespace maxcode::bot::worker {

namespace {

using nlohmann::json;

std::string shown(const json& value) { return excerpt(dump_json(value), 60); }

bool is_hex_id(const std::string& s) {
  return (s.size() == 40 || s.size() == 64) &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c) && !std::isupper(c); });
}

// The string at `key` of `object`, or an error naming "job.<path>".
std::optional<std::string> string_at(const json& object, const std::string& key, const std::string& path,
                                     std::string& error, std::size_t max_size = 4096) {
  const auto it = object.find(key);
  if (it == object.end()) {
    error = path + ": missing";
    return std::nullopt;
  }
  if (!it->is_string()) {
    error = path + ": expected a string, got " + shown(*it);
    return std::nullopt;
  }
  const std::string& s = it->get_ref<const std::string&>();
  if (s.size() > max_size) {
    error = path + ": longer than " + std::to_string(max_size) + " bytes";
    return std::nullopt;
  }
  return s;
}

}  // namespace

ClaimReading read_claimed_job(const json& job) {
  ClaimReading r;
  if (!job.is_object()) {
    r.error = "job: expected an object, got " + shown(job);
    return r;
  }
  const auto id = job.find("id");
  if (id == job.end() || !id->is_number_integer() || id->get<std::int64_t>() <= 0) {
    r.error = "job.id: expected a positive integer, got " + (id == job.end() ? std::string("nothing") : shown(*id));
    return r;
  }
  r.id = id->get<std::int64_t>();
  const auto lease = string_at(job, "lease", "job.lease", r.error, 200);
  if (!lease || lease->empty()) {
    if (lease) r.error = "job.lease: empty";
    return r;
  }
  r.lease = *lease;
  ClaimedJob c;
  c.id = r.id;
  c.lease = r.lease;
  if (const auto attempt = job.find("attempt"); attempt != job.end()) {
    if (!attempt->is_number_integer() || attempt->get<std::int64_t>() < 0 || attempt->get<std::int64_t>() > 1000000) {
      r.error = "job.attempt: expected a count, got " + shown(*attempt);
      return r;
    }
    c.attempt = attempt->get<int>();
  }
  const auto document = job.find("document");
  if (document == job.end() || !document->is_object()) {
    r.error = "job.document: expected an object (the job input), got " +
              (document == job.end() ? std::string("nothing") : shown(*document));
    return r;
  }
  c.document = *document;
  const auto source = job.find("source");
  if (source == job.end() || !source->is_object()) {
    r.error = "job.source: expected an object {url, token, commit}";
    return r;
  }
  const auto url = string_at(*source, "url", "job.source.url", r.error);
  if (!url) return r;
  if (url->rfind("http://", 0) != 0 && url->rfind("https://", 0) != 0) {
    r.error = "job.source.url: expected an http(s) URL, got " + excerpt(*url, 60);
    return r;
  }
  const auto token = string_at(*source, "token", "job.source.token", r.error);
  if (!token) return r;
  const auto commit = string_at(*source, "commit", "job.source.commit", r.error);
  if (!commit) return r;
  if (!is_hex_id(*commit)) {
    r.error = "job.source.commit: expected 40 or 64 hex digits, got " + excerpt(*commit, 60);
    return r;
  }
  c.url = *url;
  c.token = *token;
  c.commit = *commit;
  r.job = std::move(c);
  return r;
}

}  // namespace maxcode::bot::worker
