// A local GitHub REST API for maxcode's tests.
//
//   node tests/github/server.mjs [--port 0]
//
// Prints {"port": N} as its first stdout line. Every request under / is checked against
// GitHub's OpenAPI description (method and path template, parameters, JSON body, the
// headers maxcode promises) before it is served; one that does not match is answered
// 400 and counted as invalid. Responses are checked against the description too.
//
// Control endpoints (not GitHub's, not counted) under /_control:
//   POST /_control/setup   {repos, tokens, apps, manifest_codes, token_ttl_s}    see github.mjs
//   POST /_control/fail    {kind, times, method, path, ...}      inject failures
//   POST /_control/replay  {scenario}                            serve an @octokit/fixtures scenario
//   POST /_control/merge   {owner, name, number}                 a maintainer merged a PR
//   POST /_control/reset
//   GET  /_control/state   pulls, labels, comments, check runs, tokens issued
//   GET  /_control/stats   {requests, validated, invalid, response_invalid, problems, operations}
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { OpenApi } from "./openapi.mjs";
import { GitHub, HttpError } from "./github.mjs";

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const portArg = args.indexOf("--port");
const port = portArg >= 0 ? Number(args[portArg + 1]) : 0;

const api = new OpenApi();
const github = new GitHub(api);
let stats;
let failures;
let replay;

function resetAll() {
  github.reset();
  stats = { requests: 0, validated: 0, invalid: 0, response_invalid: 0, problems: [], operations: {} };
  failures = [];
  replay = null;
}
resetAll();

function send(res, status, body, headers = {}) {
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

function rateHeaders(resource = "core") {
  return { "x-ratelimit-limit": "5000", "x-ratelimit-remaining": String(Math.max(0, 5000 - stats.requests)),
    "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 3600), "x-ratelimit-used": String(stats.requests),
    "x-ratelimit-resource": resource, "x-github-media-type": "github.v3; format=json" };
}

// An injected failure for this request, if one is armed: {kind, times, method, path}.
function takeFailure(method, pathname) {
  const f = failures.find((x) => x.times > 0 && (!x.method || x.method === method) && (!x.path || new RegExp(x.path).test(pathname)));
  if (f) f.times--;
  return f;
}

function failureResponse(f) {
  const docs = "https://docs.github.com/rest";
  const now = Math.floor(Date.now() / 1000);
  switch (f.kind) {
    case "401":
      return new HttpError(401, { message: "Bad credentials", documentation_url: docs, status: "401" });
    case "403":
      return new HttpError(403, { message: "Resource not accessible by integration", documentation_url: docs, status: "403" },
        { "x-accepted-github-permissions": f.permission || "pull_requests=write" });
    case "secondary":  // 403 as GitHub documents it, or 429 (status: 429)
      return new HttpError(f.status || 403, { message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.", documentation_url: "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits", status: String(f.status || 403) },
        f.retry_after === null ? {} : { "retry-after": String(f.retry_after ?? 1) });
    case "primary":
      return new HttpError(f.status || 403, { message: "API rate limit exceeded for installation ID 1.", documentation_url: docs, status: String(f.status || 403) },
        { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(now + (f.reset_in ?? 1)) });
    case "422":
      return new HttpError(422, { message: "Validation Failed", errors: f.errors || [{ resource: "PullRequest", code: "custom", message: "Injected validation error" }], documentation_url: docs, status: "422" });
    default:
      return new HttpError(f.status || 500, { message: "Server Error", status: String(f.status || 500) });
  }
}

function control(req, res, url, body) {
  const data = body ? JSON.parse(body) : {};
  switch (`${req.method} ${url.pathname}`) {
    case "POST /_control/setup": github.setup(data); return send(res, 200, { ok: true });
    case "POST /_control/fail": failures.push({ times: 1, ...data }); return send(res, 200, { ok: true });
    case "POST /_control/replay": {
      const path = require.resolve(`@octokit/fixtures/scenarios/api.github.com/${data.scenario}/normalized-fixture.json`);
      replay = { fixtures: JSON.parse(readFileSync(path, "utf8")), next: 0 };
      return send(res, 200, { ok: true, requests: replay.fixtures.length });
    }
    case "POST /_control/merge": github.merge(data.owner, data.name, data.number); return send(res, 200, { ok: true });
    case "POST /_control/reset": resetAll(); github.base = `http://127.0.0.1:${server.address().port}`; return send(res, 200, { ok: true });
    case "GET /_control/state": return send(res, 200, github.dump());
    case "GET /_control/stats": return send(res, 200, { ...stats, replay_left: replay ? replay.fixtures.length - replay.next : 0 });
    default: return send(res, 404, { message: "no such control endpoint" });
  }
}

// The next recorded exchange of the replayed scenario, if this request is it.
function replayed(method, url) {
  if (!replay || replay.next >= replay.fixtures.length) return null;
  const f = replay.fixtures[replay.next];
  if (f.method.toUpperCase() !== method) return null;
  const want = new URL(f.path, "http://x");
  if (want.pathname !== url.pathname) return null;
  for (const [k, v] of want.searchParams) if (url.searchParams.get(k) !== v) return null;
  replay.next++;
  const headers = {};
  for (const [k, v] of Object.entries(f.headers)) {
    if (["content-length", "connection", "transfer-encoding", "content-encoding"].includes(k)) continue;
    headers[k] = String(v).replaceAll("https://api.github.com", github.base);
  }
  return { status: f.status, body: f.response === "" ? undefined : f.response, headers };
}

function serve(req, res, url, raw) {
  if (url.pathname.startsWith("/_control/")) return control(req, res, url, raw);
  stats.requests++;
  const method = req.method;
  const checked = api.check(method, url, req.headers, raw);
  if (checked.problems.length) {
    stats.invalid++;
    stats.problems.push(`${method} ${url.pathname}${url.search}: ${checked.problems.join("; ")}`);
    process.stderr.write(`fake-github: INVALID ${method} ${url.pathname}: ${checked.problems.join("; ")}\n`);
    return send(res, 400, { message: "Request does not match GitHub's OpenAPI description", errors: checked.problems });
  }
  stats.validated++;
  stats.operations[checked.operationId] = (stats.operations[checked.operationId] || 0) + 1;

  const body = raw.length ? JSON.parse(raw) : undefined;
  let out;
  let fromReplay = false;
  const failure = takeFailure(method, url.pathname);
  try {
    if (failure && failure.kind !== "after") throw failureResponse(failure);
    out = replayed(method, url);
    fromReplay = !!out;
    out = out || github.handle(checked.operationId, checked.params, url, body, req.headers);
    // A failure after the work is done: the state changed, but the caller sees an error.
    if (failure) throw failureResponse({ status: failure.status || 502 });
  } catch (e) {
    if (!(e instanceof HttpError)) {
      process.stderr.write(`fake-github: ${e.stack}\n`);
      return send(res, 500, { message: String(e.message) });
    }
    out = { status: e.status, body: e.body, headers: e.headers };
  }
  // Recorded answers are GitHub's own (from years ago): only our answers must fit today's schema.
  const responseProblems = fromReplay ? [] : api.checkResponse(checked.route, out.status, out.body);
  if (responseProblems.length) {
    stats.response_invalid++;
    stats.problems.push(`response to ${method} ${url.pathname}: ${responseProblems.join("; ")}`);
  }
  send(res, out.status, out.body, { ...rateHeaders(), ...(out.headers || {}) });
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const url = new URL(req.url, "http://127.0.0.1");
    try {
      serve(req, res, url, Buffer.concat(chunks).toString("utf8"));
    } catch (e) {
      process.stderr.write(`fake-github: ${e.stack}\n`);
      send(res, 500, { message: String(e.message) });
    }
  });
});

server.listen(port, "127.0.0.1", () => {
  github.base = `http://127.0.0.1:${server.address().port}`;
  process.stdout.write(JSON.stringify({ port: server.address().port }) + "\n");
});

// The test that started us may die without stopping us: go when stdin closes.
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
process.on("SIGTERM", () => process.exit(0));
