// Every metric the service exports, declared at start (docs/service.md lists the same).
// A series that appears only with its first event cannot be alerted on: `increase()` of
// a counter that is born at 1 is 0, so the first give-up or bad signature would go
// unseen. So every series whose label values are known in advance starts at 0; a family
// whose labels name what arrives (a GitHub route's status, a repository, a schedule)
// shows its HELP and TYPE from the start and a series per value as they come.
#pragma once

#include <string>
#include <vector>

#include "bot/service/operations/metrics.h"

namespace maxcode::bot::service {

struct MetricFamily {
  std::string name;
  std::string type;  // counter | gauge | histogram
  std::string help;
  std::vector<std::string> label_names;
  std::vector<Labels> seeded;  // the series that exist from the start, at 0
};

const std::vector<MetricFamily>& metric_catalog();

// Declares every family of the catalog in `metrics` and sets its seeded series to 0.
void declare_service_metrics(Metrics& metrics);

}  // namespace maxcode::bot::service
