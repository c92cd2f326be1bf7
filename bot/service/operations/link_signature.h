// Signed, expiring links to a job's page (job_page.h): what GitHub's "Details" opens.
//
// A link is `/jobs/ID?exp=UNIX_TIME&sig=HEX`, where HEX is the HMAC-SHA256 of
// "maxcode-job-link\nID\nEXP" under the service's link key. The link is the
// credential: whoever holds it (anyone who can see the repository's check runs) may
// read that one job's page and reports until EXP, and no other job's; it never
// carries nor needs the admin token.
//
// The key is 32 random bytes kept in a file of the data dir (mode 0600), not derived
// from the webhook secret: rotating the webhook secret (a routine step after a leak on
// GitHub's side) then does not break every Details link already on GitHub, a leaked
// link key cannot forge webhooks, and deleting the file (then restarting) revokes
// every link at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace maxcode::bot::service {

enum class LinkCheck {
  kValid,
  kExpired,  // signed by us, but its time is past (or further ahead than the lifetime allows)
  kBad,      // missing, malformed, or not our signature for this job
};

class LinkSigner {
 public:
  // `key`: the raw key bytes; `ttl_s`: how long a new link lives.
  LinkSigner(std::string key, double ttl_s);

  // Reads the key from `file`, or creates it (32 random bytes as hex, mode 0600,
  // exclusively, so that two processes starting at once agree on one key).
  // Throws std::runtime_error naming the file when it cannot, or when it holds no key.
  static LinkSigner from_key_file(const std::filesystem::path& file, double ttl_s);

  // "exp=EXP&sig=HEX" for job `job_id`, valid until now + ttl.
  std::string query(std::int64_t job_id, double now) const;
  // The signature of (job, expiry), lowercase hex.
  std::string sign(std::int64_t job_id, std::int64_t expires) const;

  // Checks the `exp` and `sig` parameters of a request for job `job_id` at `now`. The
  // signature is compared in constant time. A link whose expiry is further ahead than
  // the configured lifetime is refused too: shortening details_link_ttl_s shortens the
  // links already given out.
  LinkCheck verify(std::int64_t job_id, std::string_view exp, std::string_view sig, double now) const;

  double ttl_s() const { return ttl_s_; }

 private:
  std::string key_;
  double ttl_s_;
};

}  // namespace maxcode::bot::service
