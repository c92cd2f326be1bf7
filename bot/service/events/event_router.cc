#include "bot/service/events/event_router.h"

#include <chrono>

#include "bot/github/github_client.h"
#include "bot/service/events/event_handlers.h"
#include "bot/service/app/github_retry.h"

namespace maxcode::bot::service {

namespace {

void record(ServiceContext& context, const Delivery& d, DeliveryState state, const std::string& outcome,
            const std::string& note) {
  context.queue.deliveries.finish(d.id, state, note);
  context.metrics.count("maxcode_events_total", "webhook deliveries handled, by event and outcome",
                        {{"event", d.event}, {"outcome", outcome}});
  context.log("event", d.event + " " + d.id + ": " + outcome + ": " + note);
}

}  // namespace

void route_delivery(ServiceContext& context, const Delivery& d) {
  const auto start = std::chrono::steady_clock::now();
  const nlohmann::json payload = nlohmann::json::parse(d.payload, nullptr, false);
  if (payload.is_discarded() || !payload.is_object()) {
    record(context, d, DeliveryState::kRejected, "rejected", "payload is not a JSON object");
    return;
  }
  try {
    HandledEvent handled;
    if (d.event == "push") handled = handle_push(context, payload);
    else if (d.event == "issue_comment") handled = handle_issue_comment(context, payload);
    else if (d.event == "pull_request") handled = handle_pull_request(context, payload);
    else if (d.event == "installation") handled = handle_installation(context, payload);
    else if (d.event == "installation_repositories") handled = handle_installation_repositories(context, payload);
    else if (d.event == "check_run") handled = handle_check_run(context, payload);
    else if (d.event == "check_suite") handled = handle_check_suite(context, payload);
    else if (d.event == "ping") handled = {"recorded", "ping (zen: " + payload.value("zen", std::string()) + ")"};
    else handled = {"unknown-event", "the App does not handle '" + d.event + "' events"};
    record(context, d, DeliveryState::kHandled, handled.outcome, handled.note);
  } catch (const PayloadError& e) {
    record(context, d, DeliveryState::kRejected, "rejected", e.what());
  } catch (const GithubError& e) {
    const RetryLimits limits = retry_limits(context);
    const RetryAdvice advice =
        advise_retry(e, context.queue.deliveries.attempts(d.id) + 1, context.queue.now(), limits);
    if (advice.retry && context.queue.deliveries.defer(d.id, e.what(), limits.max_tries, advice.wait_s)) {
      context.metrics.count("maxcode_events_total", "webhook deliveries handled, by event and outcome",
                            {{"event", d.event}, {"outcome", "deferred"}});
      note_deferral(context, "event", d.event + " " + d.id, advice, context.queue.deliveries.attempts(d.id), e.what());
    } else {
      if (advice.retry) note_gave_up(context, "event", d.event + " " + d.id, limits.max_tries, e.what());
      record(context, d, DeliveryState::kFailed, "github-error", e.what());
    }
  } catch (const std::exception& e) {
    record(context, d, DeliveryState::kFailed, "error", e.what());
  }
  context.metrics.observe("maxcode_event_handling_seconds", "time to handle one delivery (GitHub calls included)",
                          {{"event", d.event}},
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

int route_pending(ServiceContext& context) {
  int handled = 0;
  // Leased: replicas sharing the store never handle one delivery twice at once.
  for (const Delivery& d : context.queue.deliveries.take(50)) {
    route_delivery(context, d);
    ++handled;
  }
  return handled;
}

}  // namespace maxcode::bot::service
