// The sweep's trend page (`maxcode sweep --report`): for every repository and target,
// plots over nights of the function's own time, the original's benchmark time and the
// best confirmed speedup, the PRs, and the regressions found, each with the commits
// between the two nights. One HTML file with inline SVG: no scripts, no assets.
#pragma once

#include <string>
#include <vector>

#include "runner/core/night.h"

namespace maxcode {

std::string render_trend_page(const std::vector<NightResult>& rows, const std::vector<Regression>& regressions);

}  // namespace maxcode
