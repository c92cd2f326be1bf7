// GitHub's official OpenAPI description (npm @octokit/openapi) as a request checker:
// finds the operation for a method and path, and validates path and query parameters,
// the JSON body and the headers maxcode promises to send. Responses the fake server
// builds are checked against the same description, so its shapes stay GitHub's.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import Ajv from "ajv";
import addFormats from "ajv-formats";

const require = createRequire(import.meta.url);
const specPath = require.resolve("@octokit/openapi/generated/api.github.com.json");

export const API_VERSION = "2022-11-28";

// Path parameters that GitHub lets span several segments ("heads/feature/x").
const GREEDY = new Set(["ref", "path", "branch"]);

function escapeRegex(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export class OpenApi {
  constructor() {
    this.spec = JSON.parse(readFileSync(specPath, "utf8"));
    this.ajv = new Ajv({ strict: false, allErrors: true, logger: false });
    addFormats(this.ajv);
    // Octokit's own formats: not standard, accepted as documented strings.
    for (const f of ["repo.nwo", "uri-template", "ssh-key", "ssh-key fingerprint"]) this.ajv.addFormat(f, true);
    this.ajv.addSchema({ components: OpenApi.fixNullable(this.spec.components) }, "gh");
    this.validators = new Map();
    this.routes = [];
    for (const [template, item] of Object.entries(this.spec.paths)) {
      const names = [];
      const parts = template.split("/").map((segment) => {
        const m = /^\{(.+)\}$/.exec(segment);
        if (!m) return escapeRegex(segment);
        names.push(m[1]);
        return GREEDY.has(m[1]) ? "(.+)" : "([^/]+)";
      });
      const regex = new RegExp("^" + parts.join("/") + "$");
      const literals = template.split("/").filter((s) => s && !s.startsWith("{")).length;
      for (const [method, op] of Object.entries(item)) {
        if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
        this.routes.push({ method: method.toUpperCase(), template, regex, names, literals, op, shared: item.parameters || [] });
      }
    }
    // Most literal segments first: /pulls/comments beats /pulls/{pull_number}.
    this.routes.sort((a, b) => b.literals - a.literals || a.names.length - b.names.length);
  }

  resolve(node) {
    while (node && node.$ref) {
      const path = node.$ref.replace(/^#\//, "").split("/");
      node = path.reduce((n, key) => n[key.replace(/~1/g, "/").replace(/~0/g, "~")], this.spec);
    }
    return node;
  }

  validator(key, schema) {
    if (!this.validators.has(key)) {
      // Schemas point into #/components; rebase their refs on the registered document.
      const rebased = OpenApi.fixNullable(JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\//g, '"$ref":"gh#/')));
      this.validators.set(key, this.ajv.compile(rebased));
    }
    return this.validators.get(key);
  }

  // GitHub's description has `nullable` beside `allOf`/`anyOf` without a `type`, which
  // ajv refuses; there it means "or null", written the JSON Schema way.
  static fixNullable(node) {
    if (Array.isArray(node)) return node.map(OpenApi.fixNullable);
    if (!node || typeof node !== "object") return node;
    const out = {};
    for (const [k, v] of Object.entries(node)) out[k] = OpenApi.fixNullable(v);
    // `nullable` with an `enum` (check-run conclusion) means null is one of the values,
    // as GitHub sends for a check run that is not completed.
    if (out.nullable === true && Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    if (out.nullable === true && out.type === undefined) {
      delete out.nullable;
      return { anyOf: [out, { type: "null" }] };
    }
    return out;
  }

  // The operation for METHOD PATH, with its decoded path parameters, or null.
  match(method, pathname) {
    // /repositories/{id}/... is GitHub's undocumented alias of /repos/{owner}/{repo}/...
    // (the form pagination links take); check it as the documented route.
    const alias = /^\/repositories\/\d+(\/.*)?$/.exec(pathname);
    if (alias) pathname = "/repos/_alias/_alias" + (alias[1] || "");
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const m = route.regex.exec(pathname);
      if (!m) continue;
      const params = {};
      route.names.forEach((name, i) => (params[name] = decodeURIComponent(m[i + 1])));
      return { route, params };
    }
    return null;
  }

  // Problems with a request, as strings (empty = valid).
  check(method, url, headers, rawBody, { jwt = false } = {}) {
    const problems = [];
    const found = this.match(method, url.pathname);
    if (!found) return { problems: [`no operation ${method} ${url.pathname} in the OpenAPI description`] };
    const { route, params } = found;
    const op = route.op;
    const parameters = [...route.shared, ...(op.parameters || [])].map((p) => this.resolve(p));
    for (const p of parameters) {
      if (p.in === "path") {
        const value = params[p.name];
        if (p.schema?.type === "integer" && !/^\d+$/.test(value)) problems.push(`path parameter ${p.name}=${value} is not an integer`);
      }
    }
    for (const [name, value] of url.searchParams) {
      const p = parameters.find((q) => q.in === "query" && q.name === name);
      if (!p) { problems.push(`unknown query parameter ${name}`); continue; }
      const schema = this.resolve(p.schema) || {};
      if (schema.type === "integer" && !/^\d+$/.test(value)) problems.push(`query ${name}=${value} is not an integer`);
      if (schema.enum && !schema.enum.includes(value)) problems.push(`query ${name}=${value} not in ${schema.enum.join(",")}`);
    }
    for (const p of parameters)
      if (p.in === "query" && p.required && !url.searchParams.has(p.name)) problems.push(`missing query parameter ${p.name}`);

    // What maxcode promises GitHub on every call.
    if (!headers["user-agent"]) problems.push("no User-Agent header (GitHub rejects such requests)");
    if (headers["x-github-api-version"] !== API_VERSION) problems.push(`X-GitHub-Api-Version is not ${API_VERSION}`);
    if (!(headers["accept"] || "").includes("application/vnd.github+json")) problems.push("Accept is not application/vnd.github+json");

    const body = op.requestBody ? this.resolve(op.requestBody) : null;
    const json = body?.content?.["application/json"];
    if (rawBody.length > 0) {
      if (!json) problems.push("a body was sent to an operation that takes none");
      else {
        if (!(headers["content-type"] || "").startsWith("application/json")) problems.push("body without Content-Type: application/json");
        let value;
        try { value = JSON.parse(rawBody); } catch (e) { problems.push("body is not JSON: " + e.message); }
        if (value !== undefined) {
          const validate = this.validator(`${route.method} ${route.template} body`, json.schema);
          if (!validate(value)) for (const e of validate.errors) problems.push(`body${e.instancePath} ${e.message}`);
        }
      }
    } else if (body?.required) {
      problems.push("the operation requires a body");
    }
    return { problems, operationId: op.operationId, route, params };
  }

  // Problems with a response the fake server is about to send.
  checkResponse(route, status, value) {
    const response = this.resolve(route.op.responses?.[String(status)]);
    const schema = response?.content?.["application/json"]?.schema;
    if (!schema || value === undefined) return [];
    const validate = this.validator(`${route.method} ${route.template} ${status}`, schema);
    return validate(value) ? [] : validate.errors.slice(0, 5).map((e) => `response${e.instancePath} ${e.message}`);
  }

  example(name) {
    return structuredClone(this.spec.components.examples[name].value);
  }
}
