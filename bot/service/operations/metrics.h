// A small Prometheus registry: counters, gauges and histograms with labels, rendered in
// the text exposition format (version 0.0.4) for GET /metrics. Thread-safe; a metric is
// declared on first use, so the code that counts also names it.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace maxcode::bot::service {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Metrics {
 public:
  void count(const std::string& name, const std::string& help, const Labels& labels = {}, double by = 1);
  void set(const std::string& name, const std::string& help, const Labels& labels, double value);
  // Observes `value` (seconds) into a histogram with fixed buckets from 0.5 ms to 10 min.
  void observe(const std::string& name, const std::string& help, const Labels& labels, double value);
  // Drops every series of a gauge (before setting it afresh, e.g. queue depth by state).
  void clear(const std::string& name);
  // A family with no series yet: its HELP and TYPE are shown from now on.
  void declare(const std::string& name, const std::string& type, const std::string& help);
  // A histogram series with no observations yet (every bucket 0).
  void declare_histogram(const std::string& name, const std::string& help, const Labels& labels);

  double value(const std::string& name, const Labels& labels = {}) const;  // counter or gauge; 0 if none
  std::string text() const;

 private:
  struct Histogram {
    std::vector<double> counts;  // per bucket, not cumulative
    double sum = 0;
    double count = 0;
  };
  struct Family {
    std::string type, help;
    std::map<std::string, double> values;        // rendered labels -> value
    std::map<std::string, Histogram> histograms;  // rendered labels -> histogram
  };
  Family& family(const std::string& name, const std::string& type, const std::string& help);
  mutable std::mutex mutex_;
  std::map<std::string, Family> families_;
};

// `{a="x",b="y"}` with Prometheus escaping; empty for no labels.
std::string render_labels(const Labels& labels);

}  // namespace maxcode::bot::service
