#include "bot/service/queue/store_access.h"

#include <sstream>

namespace maxcode::bot::service {

std::string join_labels(const std::vector<std::string>& labels) {
  std::string out;
  for (const auto& w : labels) out += (out.empty() ? "" : ",") + w;
  return out;
}

std::vector<std::string> split_labels(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string w; std::getline(in, w, ',');)
    if (!w.empty()) out.push_back(w);
  return out;
}

}  // namespace maxcode::bot::service
