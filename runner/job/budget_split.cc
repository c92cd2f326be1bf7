#include "runner/job/budget_split.h"

#include <algorithm>

namespace maxcode {

Allowance& Allowance::operator+=(const Allowance& o) {
  evaluations += o.evaluations;
  wall_s += o.wall_s;
  tokens += o.tokens;
  dollars += o.dollars;
  gpu_s += o.gpu_s;
  return *this;
}

nlohmann::json to_json(const Allowance& a) {
  return {{"evaluations", a.evaluations}, {"wall_s", a.wall_s}, {"tokens", a.tokens}, {"dollars", a.dollars},
          {"gpu_s", a.gpu_s}};
}

Allowance allowance_from_json(const nlohmann::json& j) {
  Allowance a;
  a.evaluations = j.value("evaluations", 0);
  a.wall_s = j.value("wall_s", 0.0);
  a.tokens = j.value("tokens", 0L);
  a.dollars = j.value("dollars", 0.0);
  a.gpu_s = j.value("gpu_s", 0.0);
  return a;
}

Allowance job_allowance(const Budget& b, const SearchConfig& search, int targets) {
  targets = std::max(targets, 1);
  Allowance a;
  a.evaluations = b.evaluations ? *b.evaluations : search.max_evaluations * targets;
  a.wall_s = b.wall_s ? *b.wall_s : search.max_wall_s * targets;
  a.tokens = b.tokens ? b.tokens : (search.max_tokens > 0 ? search.max_tokens * targets : 0);
  a.dollars = b.dollars > 0 ? b.dollars : (search.max_dollars > 0 ? search.max_dollars * targets : 0);
  a.gpu_s = b.gpu_s;
  return a;
}

Allowance next_target_allowance(const Allowance& total, const Allowance& spent, int targets_left) {
  targets_left = std::max(targets_left, 1);
  Allowance part;
  const int evaluations_left = std::max(total.evaluations - spent.evaluations, 0);
  // Ceiling: with 5 evaluations for 2 targets the first gets 3, the second what is left.
  part.evaluations = (evaluations_left + targets_left - 1) / targets_left;
  part.wall_s = std::max(total.wall_s - spent.wall_s, 0.0) / targets_left;
  // A limited field whose remainder is 0 must stay "spent", not turn into "no limit".
  auto share = [&](double limit, double used) -> double {
    if (limit <= 0) return 0;
    const double left = limit - used;
    return left <= 0 ? -1 : left / targets_left;
  };
  const double tokens = share(static_cast<double>(total.tokens), static_cast<double>(spent.tokens));
  part.tokens = tokens < 0 ? -1 : tokens == 0 ? 0 : std::max(1L, static_cast<long>(tokens));
  part.dollars = share(total.dollars, spent.dollars);
  part.gpu_s = share(total.gpu_s, spent.gpu_s);
  return part;
}

std::string why_nothing_left(const Allowance& part, const Allowance& total) {
  if (part.evaluations <= 0) return "evaluation budget spent (" + std::to_string(total.evaluations) + ")";
  if (part.wall_s <= 0) return "time budget spent";
  if (part.tokens < 0) return "token budget spent";
  if (part.dollars < 0) return "dollar budget spent";
  if (part.gpu_s < 0) return "timing (GPU-seconds) budget spent";
  return "";
}

}  // namespace maxcode
