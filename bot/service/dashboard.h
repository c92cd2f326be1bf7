// The dashboard at GET / (admin token): the queue by state, the jobs with their state,
// result and PR, a plot of the confirmed speedups of delivered results, and the runners
// with their last heartbeat. One self-contained HTML page (inline SVG, no scripts), so
// it works behind any proxy and in a headless browser.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bot/service/job_queue.h"

namespace maxcode::bot::service {

std::string render_dashboard(const std::vector<Job>& jobs, const std::vector<RunnerInfo>& runners,
                             const std::map<std::string, int>& counts, double now);

}  // namespace maxcode::bot::service
