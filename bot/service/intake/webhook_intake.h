// POST /webhooks/github, before anything is parsed: the body's size is capped, its
// signature checked (HMAC-SHA256, constant time), its JSON checked for being JSON nested
// at most 64 deep, and the delivery stored under its X-GitHub-Delivery id: a repeated id
// dropped unless its handling failed (then it is tried again), a body received before
// under another id dropped as a replay (DeliveryLog::record). The answer
// (202) goes out at once; handling happens on the delivery worker (event_router.h), from
// the store, so a crash between the two loses nothing.
#pragma once

#include <string>

#include "bot/service/service_context.h"

namespace maxcode::bot::service {

struct WebhookRequest {
  std::string event;      // X-GitHub-Event
  std::string delivery;   // X-GitHub-Delivery
  std::string signature;  // X-Hub-Signature-256
  std::string body;
};

struct WebhookAnswer {
  int status = 202;
  std::string result;  // metric label: accepted | retried | duplicate | replayed | unsigned | bad-signature |
                       // too-large | malformed | too-deep | no-delivery-id | no-event
  std::string message;
};

WebhookAnswer accept_webhook(ServiceContext& context, const std::string& secret, const WebhookRequest& request);

}  // namespace maxcode::bot::service
