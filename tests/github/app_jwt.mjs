// Checks a GitHub App JWT the way GitHub does: RS256 over "header.payload" with the
// App's public key, `iss` the App id, `iat` not in the future (60 s drift allowed),
// `exp` after now and at most 10 minutes after `iat`.
import { createPublicKey, verify } from "node:crypto";

function decode(part) {
  return JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
}

// Returns { app_id, claims } or throws an Error whose message GitHub-like callers show.
export function verifyAppJwt(token, apps, now = Math.floor(Date.now() / 1000)) {
  const parts = token.split(".");
  if (parts.length !== 3) throw new Error("A JSON web token could not be decoded");
  const header = decode(parts[0]);
  const claims = decode(parts[1]);
  if (header.alg !== "RS256") throw new Error(`'alg' must be RS256, not ${header.alg}`);
  const app = apps.get(String(claims.iss));
  if (!app) throw new Error("Integration not found");
  const ok = verify("sha256", Buffer.from(parts[0] + "." + parts[1]), createPublicKey(app.public_key),
    Buffer.from(parts[2], "base64url"));
  if (!ok) throw new Error("A JSON web token could not be decoded");
  if (typeof claims.iat !== "number" || claims.iat > now + 60) throw new Error("'Issued at' claim ('iat') must be an Integer representing a time in the past.");
  if (typeof claims.exp !== "number" || claims.exp <= now) throw new Error("'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires.");
  if (claims.exp - claims.iat > 600) throw new Error("'Expiration time' claim ('exp') is too far in the future");
  return { app, claims };
}
