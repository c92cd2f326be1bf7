#include "bot/service/webhook_intake.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "bot/service/webhook_signature.h"

namespace maxcode::bot::service {

namespace {

bool printable_id(const std::string& s, std::size_t max) {
  return !s.empty() && s.size() <= max &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_' || c == '.'; });
}

}  // namespace

WebhookAnswer accept_webhook(ServiceContext& context, const std::string& secret, const WebhookRequest& request) {
  if (request.body.size() > context.config.max_body_bytes)
    return {413, "too-large", "body of " + std::to_string(request.body.size()) + " bytes exceeds the limit"};
  const SignatureCheck check = verify_webhook_signature(secret, request.body, request.signature);
  if (check != SignatureCheck::kValid) {
    context.log("webhook", "refused delivery " + (printable_id(request.delivery, 100) ? request.delivery : "(no id)") +
                               ": signature " + signature_check_name(check));
    return {401, check == SignatureCheck::kMissing ? "unsigned" : "bad-signature",
            std::string("signature ") + signature_check_name(check)};
  }
  if (!printable_id(request.delivery, 100)) return {400, "no-delivery-id", "X-GitHub-Delivery missing or malformed"};
  if (!printable_id(request.event, 64)) return {400, "no-event", "X-GitHub-Event missing or malformed"};
  // Validates without building the document: cheap, and a signed but broken payload is
  // refused now rather than failing later.
  if (!nlohmann::json::accept(request.body)) {
    context.log("webhook", "delivery " + request.delivery + " (" + request.event + "): malformed JSON, refused");
    return {400, "malformed", "the body is not JSON"};
  }
  if (!context.queue.record_delivery(request.delivery, request.event, request.body))
    return {200, "duplicate", "delivery " + request.delivery + " was received before"};
  return {202, "accepted", "queued"};
}

}  // namespace maxcode::bot::service
