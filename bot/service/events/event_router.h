// The delivery worker's step: one stored delivery to its event handler
// (event_handlers.h). Unknown events are recorded and ignored; a payload that lacks what
// its event needs is rejected; a GitHub failure that may pass (no answer, 5xx, a rate
// limit) leaves the delivery for a later try with backoff. Every outcome is a log line
// and a metric.
#pragma once

#include "bot/service/queue/job_queue.h"
#include "bot/service/service_context.h"

namespace maxcode::bot::service {

// Handles `delivery` and records the outcome with the queue.
void route_delivery(ServiceContext& context, const Delivery& delivery);

// Handles every stored, unhandled delivery that is due; returns how many it handled.
int route_pending(ServiceContext& context);

}  // namespace maxcode::bot::service
