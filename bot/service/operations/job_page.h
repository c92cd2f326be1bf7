// One job's page, for the repository's developers: what GitHub's "Details" on the job's
// check run opens. It shows the repository, commit, targets, state, durations, the
// speedups, the pull request, a failed job's cause (whole) and the end of its log, and
// links each target's report.html and patch.diff.
//
// Access (link_signature.h): a signed link that expires, never the admin token. The
// link grants that one job's page and its targets' files; anyone who can see the check
// run on GitHub can open it. What is shown is the job's public record: the service's
// own paths (the data dir) are replaced by DATA_DIR, and the service's secrets (the
// webhook secret, the admin and runner tokens, whatever redact_secrets knows) by
// [redacted]. Reports come from the runner with its paths already replaced by JOB_DIR.
//
//   GET /jobs/ID?exp=EXP&sig=SIG                           the page (text/html)
//   GET /jobs/ID/targets/SLUG/report.html?exp=EXP&sig=SIG  the target's report
//   GET /jobs/ID/targets/SLUG/patch.diff?exp=EXP&sig=SIG   its patch (text/plain)
// A bad or expired link: 403 with a plain explanation. A job or file that does not
// exist: 404. The pages run no script and load nothing from elsewhere (a strict
// Content-Security-Policy says so to the browser), and are never cached or framed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bot/service/queue/job_queue.h"
#include "bot/service/operations/link_signature.h"

namespace httplib {
class Server;
}

namespace maxcode::bot::service {

struct ServiceContext;

// "/jobs/ID?exp=...&sig=..." (relative, for the admin dashboard).
std::string job_page_link(const LinkSigner& links, std::int64_t job_id, double now);
// The absolute link for a check run's details_url: public_url (without a trailing
// slash) + job_page_link; empty when public_url is.
std::string job_details_url(const std::string& public_url, const LinkSigner& links, std::int64_t job_id, double now);

// Replacements made in every text a page shows, longest first.
class PageScrub {
 public:
  void replace(const std::string& from, const std::string& to);
  std::string operator()(std::string text) const;

 private:
  std::vector<std::pair<std::string, std::string>> pairs_;
};

// The page's HTML. `files`: per target slug, which of report.html and patch.diff exist;
// `link_query`: "exp=...&sig=..." to append to those files' links; `expires`: the
// link's expiry (shown).
std::string render_job_page(const Job& job, const std::map<std::string, std::vector<std::string>>& files,
                            const std::string& link_query, double expires, const PageScrub& scrub, double now);

// Registers the routes above. `secrets`: values never to be shown.
void add_job_page_routes(httplib::Server& server, ServiceContext& context, const LinkSigner& links,
                         const std::vector<std::string>& secrets);

}  // namespace maxcode::bot::service
