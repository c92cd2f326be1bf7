#include "bot/service/intake/webhook_intake.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "bot/service/intake/webhook_signature.h"
#include "runner/util/json_io.h"

namespace maxcode::bot::service {

namespace {

// GitHub's payloads nest about 8 levels; the limit leaves room and refuses a body built
// to exhaust memory or the stack of whatever walks it.
constexpr std::size_t kMaxWebhookDepth = 64;
// GitHub's payloads hold hundreds of values (an installation listing a thousand
// repositories, some ten thousand). A body with more, within the size cap (a signed
// flat array of 12,000,000 numbers: 24 MB), would cost the event worker ~30 bytes of
// memory per value to parse: refused at the door instead.
constexpr std::size_t kMaxWebhookValues = 500'000;

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
  // Validates without building the document, nesting included (a body 10,000,000 levels
  // deep would cost the event worker hundreds of MB to parse): cheap, and a signed but
  // broken payload is refused now rather than failing later.
  const JsonCheck json = check_json_input(request.body, "the body", kMaxWebhookDepth, kMaxWebhookValues);
  if (json.verdict != JsonCheck::Verdict::kValid) {
    context.log("webhook", "delivery " + request.delivery + " (" + request.event + "): refused: " + json.problem);
    if (json.verdict == JsonCheck::Verdict::kTooDeep) return {400, "too-deep", json.problem};
    if (json.verdict == JsonCheck::Verdict::kTooMany) return {413, "too-many-values", json.problem};
    return {400, "malformed", "the body is not JSON (" + json.problem + ")"};
  }
  const DeliveryLog::Recorded recorded = context.queue.deliveries.record(request.delivery, request.event, request.body);
  switch (recorded.kind) {
    case DeliveryLog::Recorded::Kind::kDuplicate:
      return {200, "duplicate", "delivery " + request.delivery + " was received before (" + recorded.original + ")"};
    case DeliveryLog::Recorded::Kind::kReplayed:
      context.log("webhook", "delivery " + request.delivery + " (" + request.event + "): the same body as delivery " +
                                 recorded.original + "; a replay, dropped");
      return {200, "replayed", "the same body was received before as delivery " + recorded.original};
    case DeliveryLog::Recorded::Kind::kRetried:
      context.log("webhook", "delivery " + request.delivery + " (" + request.event + "): redelivered after it failed; handled again");
      return {202, "retried", "queued again (its first handling failed)"};
    case DeliveryLog::Recorded::Kind::kStored:
      break;
  }
  return {202, "accepted", "queued"};
}

}  // namespace maxcode::bot::service
