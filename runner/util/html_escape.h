// Text placed in HTML: every report page, the trend page and the service's dashboard
// escape through this one function.
#pragma once

#include <string>

namespace maxcode {

// & < > " and ' as entities, so the text is safe in element content and in attribute
// values quoted either way.
std::string html_escape(const std::string& text);

}  // namespace maxcode
