#include "bot/service/operations/metrics.h"

#include <gtest/gtest.h>

namespace maxcode::bot::service {
namespace {

TEST(Metrics, RendersPrometheusText) {
  Metrics m;
  m.count("maxcode_webhooks_total", "webhooks", {{"event", "push"}, {"result", "accepted"}});
  m.count("maxcode_webhooks_total", "webhooks", {{"event", "push"}, {"result", "accepted"}}, 2);
  m.set("maxcode_jobs", "jobs by state", {{"state", "queued"}}, 4);
  m.observe("maxcode_webhook_seconds", "latency", {}, 0.003);
  m.observe("maxcode_webhook_seconds", "latency", {}, 0.0004);
  m.count("odd", "escaping", {{"v", "a\"b\\c\nd"}});
  const std::string text = m.text();
  EXPECT_NE(text.find("# HELP maxcode_webhooks_total webhooks\n# TYPE maxcode_webhooks_total counter\n"
                      "maxcode_webhooks_total{event=\"push\",result=\"accepted\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE maxcode_jobs gauge\nmaxcode_jobs{state=\"queued\"} 4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("maxcode_webhook_seconds_bucket{le=\"0.0005\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("maxcode_webhook_seconds_bucket{le=\"0.002\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("maxcode_webhook_seconds_bucket{le=\"0.005\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("maxcode_webhook_seconds_bucket{le=\"+Inf\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("maxcode_webhook_seconds_count 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("odd{v=\"a\\\"b\\\\c\\nd\"} 1\n"), std::string::npos) << text;
  EXPECT_EQ(m.value("maxcode_webhooks_total", {{"event", "push"}, {"result", "accepted"}}), 3);
  m.clear("maxcode_jobs");
  EXPECT_EQ(m.text().find("maxcode_jobs{"), std::string::npos);
}

}  // namespace
}  // namespace maxcode::bot::service
