#include "bot/service/operations/metrics.h"

#include <cstdio>
#include <sstream>

namespace maxcode::bot::service {

namespace {

const std::vector<double>& buckets() {
  static const std::vector<double> b{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5,
                                     1,      2.5,   5,     10,    30,   60,   120,  300, 600};
  return b;
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

// The label set with one more label (le) inside the braces.
std::string with_label(const std::string& rendered, const std::string& name, const std::string& value) {
  const std::string extra = name + "=\"" + value + "\"";
  if (rendered.empty()) return "{" + extra + "}";
  return rendered.substr(0, rendered.size() - 1) + "," + extra + "}";
}

}  // namespace

std::string render_labels(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (i) out += ",";
    out += labels[i].first + "=\"";
    for (char c : labels[i].second) {
      if (c == '\\') out += "\\\\";
      else if (c == '"') out += "\\\"";
      else if (c == '\n') out += "\\n";
      else out += c;
    }
    out += "\"";
  }
  return out + "}";
}

Metrics::Family& Metrics::family(const std::string& name, const std::string& type, const std::string& help) {
  Family& f = families_[name];
  if (f.type.empty()) {
    f.type = type;
    f.help = help;
  }
  return f;
}

void Metrics::count(const std::string& name, const std::string& help, const Labels& labels, double by) {
  std::lock_guard lock(mutex_);
  family(name, "counter", help).values[render_labels(labels)] += by;
}

void Metrics::set(const std::string& name, const std::string& help, const Labels& labels, double value) {
  std::lock_guard lock(mutex_);
  family(name, "gauge", help).values[render_labels(labels)] = value;
}

void Metrics::clear(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = families_.find(name);
  if (it != families_.end()) it->second.values.clear();
}

void Metrics::declare(const std::string& name, const std::string& type, const std::string& help) {
  std::lock_guard lock(mutex_);
  family(name, type, help);
}

void Metrics::declare_histogram(const std::string& name, const std::string& help, const Labels& labels) {
  std::lock_guard lock(mutex_);
  Histogram& h = family(name, "histogram", help).histograms[render_labels(labels)];
  if (h.counts.empty()) h.counts.assign(buckets().size(), 0);
}

void Metrics::observe(const std::string& name, const std::string& help, const Labels& labels, double value) {
  std::lock_guard lock(mutex_);
  Histogram& h = family(name, "histogram", help).histograms[render_labels(labels)];
  if (h.counts.empty()) h.counts.assign(buckets().size(), 0);
  for (std::size_t i = 0; i < buckets().size(); ++i)
    if (value <= buckets()[i]) {
      h.counts[i] += 1;
      break;
    }
  h.sum += value;
  h.count += 1;
}

double Metrics::value(const std::string& name, const Labels& labels) const {
  std::lock_guard lock(mutex_);
  auto f = families_.find(name);
  if (f == families_.end()) return 0;
  auto v = f->second.values.find(render_labels(labels));
  if (v != f->second.values.end()) return v->second;
  auto h = f->second.histograms.find(render_labels(labels));
  return h == f->second.histograms.end() ? 0 : h->second.count;
}

std::string Metrics::text() const {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  for (const auto& [name, f] : families_) {
    out << "# HELP " << name << " " << f.help << "\n# TYPE " << name << " " << f.type << "\n";
    for (const auto& [labels, v] : f.values) out << name << labels << " " << number(v) << "\n";
    for (const auto& [labels, h] : f.histograms) {
      double cumulative = 0;
      for (std::size_t i = 0; i < buckets().size(); ++i) {
        cumulative += h.counts[i];
        out << name << "_bucket" << with_label(labels, "le", number(buckets()[i])) << " " << number(cumulative) << "\n";
      }
      out << name << "_bucket" << with_label(labels, "le", "+Inf") << " " << number(h.count) << "\n";
      out << name << "_sum" << labels << " " << number(h.sum) << "\n";
      out << name << "_count" << labels << " " << number(h.count) << "\n";
    }
  }
  return out.str();
}

}  // namespace maxcode::bot::service
