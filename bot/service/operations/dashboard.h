// The dashboard at GET / (admin token): the queue by state, the jobs with their state,
// result, PR, speedups and durations, each linked to its page (job_page.h), a plot of
// the confirmed speedups of delivered results, and the runners heard from recently with
// their last heartbeat. One self-contained HTML page (inline SVG, no scripts; it
// reloads itself every 30 s with a meta refresh), so it works behind any proxy and in a
// headless browser.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bot/service/queue/job_queue.h"

namespace maxcode::bot::service {

std::string render_dashboard(const std::vector<Job>& jobs, const std::vector<RunnerInfo>& runners,
                             const std::map<std::string, int>& counts, double now,
                             // The address of a job's page (signed: job_page_link).
                             const std::function<std::string(const Job&)>& job_link,
                             // Runners whose last heartbeat is older than this are gone.
                             double runner_window_s);

}  // namespace maxcode::bot::service
