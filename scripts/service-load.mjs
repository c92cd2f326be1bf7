// Load generator for scripts/service-load.sh: signed webhooks (the recorded `push`
// example of @octokit/webhooks-examples, a new delivery id and a distinct body each) sent to 127.0.0.1 at a
// steady rate (open loop: a request leaves on schedule whether or not earlier ones were
// answered), for a fixed time per rate. Prints, per rate: sent, 202s, errors, the rate
// held, and p50/p99/max latency of the answer.
//
//   node scripts/service-load.mjs --port N[,M...] --secret S [--rates "250 500 1000"] [--seconds 5]
// With several ports (replicas of one store) each webhook goes to one of them at random.
//   node scripts/service-load.mjs --port N --secret S --slow-connections 500 [--seconds 10]
import http from "node:http";
import { createHmac } from "node:crypto";
import { createRequire } from "node:module";

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const ports = String(arg("port")).split(",").map(Number);
const port = ports[0];  // the slow-connection run's
const secret = arg("secret");
const rates = arg("rates", "250 500 1000 1500 2000").split(/\s+/).filter(Boolean).map(Number);
const seconds = Math.min(Number(arg("seconds", "5")), 60);
const require = createRequire(new URL("../tests/github/package.json", import.meta.url));
const example = require("@octokit/webhooks-examples").find((e) => e.name === "push").examples[0];
const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

// Each request its own bytes (GitHub never sends one body twice; the service drops a
// body it has seen under another delivery id as a replay).
function send(id, options = {}) {
  const body = JSON.stringify({ ...example, maxcode_load_id: id });
  return new Promise((resolve) => {
    const start = process.hrtime.bigint();
    const req = http.request({ host: "127.0.0.1", port: ports[Math.floor(Math.random() * ports.length)], path: "/webhooks/github", method: "POST", agent: options.agent ?? agent, headers: {
      "content-type": "application/json", "content-length": Buffer.byteLength(body), "x-github-event": "push",
      "x-github-delivery": id, "x-hub-signature-256": "sha256=" + createHmac("sha256", secret).update(body).digest("hex") } },
    (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - start) / 1e6 }));
    });
    req.on("error", () => resolve({ status: 0, ms: Number(process.hrtime.bigint() - start) / 1e6 }));
    req.end(body);
  });
}

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

function healthz() {
  return new Promise((resolve) => {
    const start = process.hrtime.bigint();
    const req = http.get({ host: "127.0.0.1", port, path: "/healthz", agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - start) / 1e6 }));
    });
    req.on("error", () => resolve({ status: 0, ms: Number(process.hrtime.bigint() - start) / 1e6 }));
  });
}

function figures(name, answers, ok) {
  const ms = answers.map((a) => a.ms).sort((a, b) => a - b);
  const good = answers.filter((a) => a.status === ok).length;
  console.log(`  ${name}: ${answers.length} sent, ${good} answered ${ok}, ${answers.length - good} failed, ` +
    `p50 ${percentile(ms, 50).toFixed(2)} ms, p99 ${percentile(ms, 99).toFixed(2)} ms, max ${ms[ms.length - 1].toFixed(2)} ms`);
  return ms[ms.length - 1];
}

// --slow-connections N: N connections that never finish a request (half send nothing,
// half a header byte every 2 s), held for `seconds`; meanwhile /healthz every 100 ms and
// a signed webhook every 200 ms, each on a new connection. Prints their latencies and
// how many slow connections the service closed, and when.
const slow = Number(arg("slow-connections", "0"));
if (slow > 0) {
  const net = await import("node:net");
  const hold = Math.max(seconds, 5);
  const line = "POST /webhooks/github HTTP/1.1\r\nHost: x\r\nX-Slow: ";
  const sockets = [];
  const t0 = performance.now();
  const closedAt = [];
  for (let i = 0; i < slow; i++) {
    const s = net.connect({ host: "127.0.0.1", port });
    s.on("error", () => {});
    s.on("close", () => closedAt.push((performance.now() - t0) / 1000));
    s.trickle = i % 2 === 1;
    sockets.push(s);
  }
  let sent = 0;
  const trickler = setInterval(() => {
    for (const s of sockets) if (s.trickle && !s.destroyed) s.write(line[Math.min(sent, line.length - 1)]);
    sent++;
  }, 2000);
  const checks = [], hooks = [];
  const noKeepAlive = new http.Agent({ keepAlive: false });
  let n = 0;
  while (performance.now() - t0 < hold * 1000) {
    checks.push(healthz());
    if (n++ % 2 === 0) hooks.push(send(`slow-${n}-${Date.now()}`, { agent: noKeepAlive }));
    await new Promise((r) => setTimeout(r, 100));
  }
  clearInterval(trickler);
  const a = await Promise.all(checks), b = await Promise.all(hooks);
  console.log(`${slow} slow connections (${Math.ceil(slow / 2)} silent, ${Math.floor(slow / 2)} sending a header byte every 2 s) for ${hold} s:`);
  const worst = Math.max(figures("/healthz", a, 200), figures("signed webhooks", b, 202));
  closedAt.sort((x, y) => x - y);
  console.log(`  closed by the service: ${closedAt.length} of ${slow}` +
    (closedAt.length ? `, first after ${closedAt[0].toFixed(1)} s, last after ${closedAt[closedAt.length - 1].toFixed(1)} s` : ""));
  console.log(worst < 1000 ? "every /healthz and webhook answered within 1 s" : `SLOW: worst answer ${worst.toFixed(0)} ms`);
  for (const s of sockets) s.destroy();
  agent.destroy();
  process.exit(0);
}

const results = [];
for (const rate of rates) {
  const total = Math.round(rate * seconds);
  const pending = [];
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(send(`load-${rate}-${i}-${Date.now()}`));
  }
  const sentIn = (performance.now() - t0) / 1000;
  const answers = await Promise.all(pending);
  const elapsed = (performance.now() - t0) / 1000;
  const ms = answers.map((a) => a.ms).sort((a, b) => a - b);
  const ok = answers.filter((a) => a.status === 202).length;
  const r = { rate, sent: total, accepted: ok, errors: total - ok, held: total / Math.max(sentIn, elapsed),
    p50: percentile(ms, 50), p99: percentile(ms, 99), max: ms[ms.length - 1] };
  results.push(r);
  console.log(`rate ${String(rate).padStart(5)}/s: sent ${r.sent}, 202 ${r.accepted}, errors ${r.errors}, held ${r.held.toFixed(0)}/s, ` +
    `p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, max ${r.max.toFixed(2)} ms`);
  await new Promise((r) => setTimeout(r, 1000));  // let the event worker catch up between rates
}
const good = results.filter((r) => r.errors === 0 && r.p99 < 20 && r.held >= 0.95 * r.rate);
console.log(good.length ? `highest rate held with p99 < 20 ms and no errors: ${Math.max(...good.map((r) => r.rate))}/s`
  : "no rate held with p99 < 20 ms and no errors");
agent.destroy();
