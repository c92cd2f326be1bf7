// report.html: the report for a browser, with the search's progress as a plot (best
// confirmed-in-search speedup against evaluations spent) drawn as inline SVG, so the
// file stands alone: no scripts, no external assets.
#pragma once

#include <string>

#include "runner/report/report.h"
#include "runner/util/html_escape.h"

namespace maxcode {

std::string render_html_report(const RunInfo& info, const SearchResult& result, const std::string& patch);

// The plot alone (an <svg> element): best speedup so far after each evaluation.
std::string render_progress_svg(const SearchResult& result);

}  // namespace maxcode
