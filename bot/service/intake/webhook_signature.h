// GitHub webhook signatures: `X-Hub-Signature-256: sha256=<hex>`, the HMAC-SHA256 of the
// raw request body under the webhook secret. The service checks it before it parses
// anything, and compares in constant time so that the answer's timing says nothing
// about how much of a forged signature was right.
#pragma once

#include <string>
#include <string_view>

namespace maxcode::bot::service {

// "sha256=" followed by the lowercase hex HMAC-SHA256 of `body` under `secret`.
std::string sign_webhook(std::string_view secret, std::string_view body);

enum class SignatureCheck { kValid, kMissing, kMalformed, kWrong };
const char* signature_check_name(SignatureCheck check);

// Checks `header` (the X-Hub-Signature-256 value, empty when absent) against `body`.
SignatureCheck verify_webhook_signature(std::string_view secret, std::string_view body, std::string_view header);

// Constant-time equality of two byte strings of the same length (false when the
// lengths differ; lengths are not secret here).
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace maxcode::bot::service
