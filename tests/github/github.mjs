// The state of the fake GitHub (repositories, pull requests, labels, comments, check
// runs, tokens) and the handlers of the operations maxcode uses. Objects start from the
// examples in GitHub's OpenAPI description and take the state's values, so they have
// GitHub's shapes; server.mjs checks every response against the schema as well.
import { execFileSync } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { verifyAppJwt } from "./app_jwt.mjs";

export class HttpError extends Error {
  constructor(status, body, headers = {}) {
    super(body.message);
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

const DOCS = "https://docs.github.com/rest";

function iso(seconds = Date.now() / 1000) {
  return new Date(Math.floor(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function validationFailed(errors) {
  return new HttpError(422, { message: "Validation Failed", errors, documentation_url: DOCS, status: "422" });
}

export class GitHub {
  constructor(api) {
    this.api = api;
    this.reset();
  }

  reset() {
    this.repos = new Map();
    this.tokens = new Map();
    this.apps = new Map();
    this.manifestCodes = new Map();
    this.nextId = 1000;
    this.tokensIssued = 0;
    this.tokenTtl = 3600;
    this.base = "";
  }

  id() {
    return ++this.nextId;
  }

  // Control: repositories, tokens and Apps for a test.
  setup({ repos = [], tokens = [], apps = [], manifest_codes = [], token_ttl_s }) {
    for (const r of repos) {
      const key = `${r.owner}/${r.name}`.toLowerCase();
      this.repos.set(key, {
        owner: r.owner, name: r.name, id: this.id(), git_dir: r.git_dir || "", refs: r.refs || {},
        default_branch: r.default_branch || "main", protected: new Set(r.protected || []),
        issues: [], labels: new Map(), comments: [], checkRuns: [], nextNumber: r.first_number || 1,
        collaborators: r.collaborators || {},
      });
      // Plain issues (not pull requests), for comments on them.
      const repo = this.repos.get(key);
      for (const i of r.issues || []) {
        const n = i.number || repo.nextNumber;
        repo.nextNumber = Math.max(repo.nextNumber, n + 1);
        repo.issues.push({ id: this.id(), number: n, plain: true, state: "open", title: i.title || `issue ${n}`, labels: [] });
      }
    }
    for (const t of tokens)
      this.tokens.set(t.token, { kind: "pat", type: "User", permissions: {}, ...t });
    for (const a of apps) this.apps.set(String(a.id), { slug: `app-${a.id}`, installations: [], ...a });
    for (const c of manifest_codes) this.createFromManifest(c);
    if (token_ttl_s !== undefined) this.tokenTtl = token_ttl_s;
  }

  // What GitHub does when the operator confirms a manifest on its "new App" page: the
  // App exists from then on (with a key pair whose public half checks its JWTs), and the
  // browser is redirected with a code for POST /app-manifests/{code}/conversions, good
  // once within an hour. {code, manifest, owner, expires_in_s, installations}.
  createFromManifest({ code, manifest, owner = "octocat", expires_in_s = 3600, installations = [] }) {
    if (!code || !manifest?.url) throw new Error("a manifest code needs a code and a manifest with its url (GitHub requires url)");
    const id = this.id();
    const name = manifest.name || `app-${id}`;
    const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
    const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048,
      publicKeyEncoding: { type: "spki", format: "pem" }, privateKeyEncoding: { type: "pkcs1", format: "pem" } });
    const app = { id, slug, name, owner, manifest, installations, public_key: publicKey, created_at: iso(),
      webhook_secret: manifest.hook_attributes?.url ? randomBytes(20).toString("hex") : null,
      client_id: `Iv23li${randomBytes(7).toString("hex")}`, client_secret: randomBytes(20).toString("hex") };
    this.apps.set(String(id), app);
    this.manifestCodes.set(code, { app, pem: privateKey, expires_at: Date.now() / 1000 + expires_in_s });
  }

  // POST /app-manifests/{code}/conversions (no authentication): the App's credentials,
  // once. A used, expired or unknown code is 404, as GitHub answers it.
  convertManifest({ code }) {
    const entry = this.manifestCodes.get(code);
    this.manifestCodes.delete(code);
    if (!entry || entry.expires_at <= Date.now() / 1000)
      throw new HttpError(404, { message: "Not Found", documentation_url: "https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest", status: "404" });
    const { app, pem } = entry;
    const m = app.manifest;
    return { status: 201, body: { id: app.id, slug: app.slug, node_id: `A_${app.id}`, client_id: app.client_id,
      owner: this.user(app.owner), name: app.name, description: m.description ?? "", external_url: m.url,
      html_url: `${this.base}/apps/${app.slug}`, created_at: app.created_at, updated_at: app.created_at,
      permissions: m.default_permissions || {}, events: m.default_events || [], installations_count: app.installations.length,
      client_secret: app.client_secret, webhook_secret: app.webhook_secret, pem } };
  }

  repo(owner, name) {
    const r = this.repos.get(`${owner}/${name}`.toLowerCase());
    if (!r) throw new HttpError(404, { message: "Not Found", documentation_url: DOCS, status: "404" });
    return r;
  }

  // --- identity and permissions -------------------------------------------------------

  authenticate(header) {
    const m = /^(?:token|bearer)\s+(.+)$/i.exec(header || "");
    const token = m && this.tokens.get(m[1]);
    const now = Date.now() / 1000;
    if (!token || (token.expires_at && token.expires_at <= now))
      throw new HttpError(401, { message: "Bad credentials", documentation_url: DOCS, status: "401" });
    return token;
  }

  require(token, repo, permission, level = "write") {
    if (token.kind === "installation" && token.repos && !token.repos.includes(repo.name))
      throw new HttpError(404, { message: "Not Found", documentation_url: DOCS, status: "404" });
    const alternatives = permission.split("|");
    const have = (p) => token.permissions[p] === "write" || (level === "read" && token.permissions[p] === "read");
    if (alternatives.some(have)) return;
    const who = token.kind === "installation" ? "integration" : "personal access token";
    throw new HttpError(403, { message: `Resource not accessible by ${who}`, documentation_url: DOCS, status: "403" },
      { "x-accepted-github-permissions": alternatives.map((p) => `${p}=${level}`).join("; ") });
  }

  user(login, type = "User") {
    const u = this.api.example("simple-user");
    const id = [...login].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 1e7, 7);
    const path = encodeURIComponent(login);
    return { ...u, login, id, node_id: `U_${id}`, type, html_url: `${this.base}/${path}`,
      url: `${this.base}/users/${path}`, site_admin: false };
  }

  // GET /users/{username} and GET /user: a user with every field GitHub shows publicly,
  // its id the same as in every other object that names this login.
  fullUser(login, type) {
    const u = this.user(login, type);
    const { private_gists, total_private_repos, owned_private_repos, disk_usage, collaborators, two_factor_authentication, plan,
      ...shown } = this.api.example("private-user");
    return { ...shown, ...u, user_view_type: "public", name: null, company: null, blog: "", location: null, email: null,
      hireable: null, bio: null, twitter_username: null, public_repos: 0, public_gists: 0, followers: 0, following: 0,
      created_at: iso(1.6e9), updated_at: iso(1.6e9) };
  }

  // The App a JWT (app_jwt.mjs) signs for; 401 as GitHub answers a bad one.
  appOf(headers) {
    const m = /^bearer\s+(.+)$/i.exec(headers["authorization"] || "");
    if (!m) throw new HttpError(401, { message: "A JSON web token could not be decoded", documentation_url: DOCS, status: "401" });
    try {
      return verifyAppJwt(m[1], this.apps).app;
    } catch (e) {
      throw new HttpError(401, { message: e.message, documentation_url: DOCS, status: "401" });
    }
  }

  // --- git refs: read from the bare repository the git server serves --------------------

  refSha(repo, branch) {
    if (!repo.git_dir) return repo.refs[branch] || null;
    try {
      return execFileSync("git", ["--git-dir", repo.git_dir, "rev-parse", "--verify", "-q", `refs/heads/${branch}^{commit}`],
        { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    } catch {
      return null;
    }
  }

  // --- shapes ---------------------------------------------------------------------------

  repository(repo) {
    const r = this.api.example("full-repository");
    const full = `${repo.owner}/${repo.name}`;
    return { ...r, id: repo.id, node_id: `R_${repo.id}`, name: repo.name, full_name: full, owner: this.user(repo.owner, "Organization"),
      private: false, html_url: `${this.base}/${full}`, url: `${this.base}/repos/${full}`, default_branch: repo.default_branch,
      permissions: { admin: false, maintain: false, push: true, triage: true, pull: true }, has_discussions: false,
      organization: undefined, parent: undefined, source: undefined, template_repository: undefined };
  }

  label(repo, l) {
    const url = `${this.base}/repos/${repo.owner}/${repo.name}/labels/${encodeURIComponent(l.name)}`;
    return { id: l.id, node_id: `LA_${l.id}`, url, name: l.name, description: l.description ?? null, color: l.color, default: false };
  }

  pull(repo, pr) {
    const p = this.api.example("pull-request");
    const full = `${repo.owner}/${repo.name}`;
    const url = `${this.base}/repos/${full}/pulls/${pr.number}`;
    const headSha = this.refSha(repo, pr.head) || pr.head_sha;
    const side = (ref, sha) => ({ label: `${repo.owner}:${ref}`, ref, sha, user: this.user(repo.owner, "Organization"), repo: this.repository(repo) });
    return {
      ...p, url, id: pr.id, node_id: `PR_${pr.id}`, number: pr.number, state: pr.state, locked: false,
      title: pr.title, body: pr.body ?? null, user: pr.user, labels: pr.labels.map((n) => this.label(repo, repo.labels.get(n))),
      html_url: `${this.base}/${full}/pull/${pr.number}`, diff_url: `${this.base}/${full}/pull/${pr.number}.diff`,
      patch_url: `${this.base}/${full}/pull/${pr.number}.patch`, issue_url: `${this.base}/repos/${full}/issues/${pr.number}`,
      commits_url: `${url}/commits`, review_comments_url: `${url}/comments`, comments_url: `${this.base}/repos/${full}/issues/${pr.number}/comments`,
      statuses_url: `${this.base}/repos/${full}/statuses/${headSha}`,
      created_at: pr.created_at, updated_at: pr.updated_at, closed_at: pr.closed_at, merged_at: pr.merged_at,
      merge_commit_sha: null, assignee: null, assignees: [], requested_reviewers: [], requested_teams: [], milestone: null,
      head: side(pr.head, headSha), base: side(pr.base, this.refSha(repo, pr.base) || pr.base_sha),
      draft: false, merged: !!pr.merged_at, mergeable: null, rebaseable: null, mergeable_state: "unknown", merged_by: null,
      comments: repo.comments.filter((c) => c.issue === pr.number).length, review_comments: 0, maintainer_can_modify: !!pr.maintainer_can_modify,
      commits: 1, additions: 0, deletions: 0, changed_files: 1, auto_merge: null, active_lock_reason: null,
      author_association: "NONE",
    };
  }

  pullSimple(repo, pr) {
    const keys = Object.keys(this.api.example("pull-request-simple-items")[0]);
    const full = this.pull(repo, pr);
    return Object.fromEntries(keys.map((k) => [k, full[k]]));
  }

  comment(repo, c) {
    const full = `${repo.owner}/${repo.name}`;
    return { ...this.api.example("issue-comment"), id: c.id, node_id: `IC_${c.id}`, url: `${this.base}/repos/${full}/issues/comments/${c.id}`,
      html_url: `${this.base}/${full}/pull/${c.issue}#issuecomment-${c.id}`, issue_url: `${this.base}/repos/${full}/issues/${c.issue}`,
      body: c.body, user: c.user, created_at: c.created_at, updated_at: c.updated_at, author_association: "NONE",
      performed_via_github_app: null, reactions: undefined };
  }

  issue(repo, i) {
    const full = `${repo.owner}/${repo.name}`;
    const url = `${this.base}/repos/${full}/issues/${i.number}`;
    const out = { ...this.api.example("issue"), id: i.id, node_id: `I_${i.id}`, url, repository_url: `${this.base}/repos/${full}`,
      labels_url: `${url}/labels{/name}`, comments_url: `${url}/comments`, events_url: `${url}/events`,
      html_url: `${this.base}/${full}/${i.plain ? "issues" : "pull"}/${i.number}`, number: i.number, state: i.state,
      title: i.title, body: i.body ?? null, user: i.user || this.user(repo.owner), labels: (i.labels || []).map((n) => this.label(repo, repo.labels.get(n))),
      assignee: null, assignees: [], milestone: null, locked: false, active_lock_reason: null,
      comments: repo.comments.filter((c) => c.issue === i.number).length, closed_at: i.closed_at || null,
      created_at: i.created_at || iso(), updated_at: i.updated_at || iso(), author_association: "NONE", state_reason: null,
      closed_by: undefined, repository: undefined, performed_via_github_app: undefined, reactions: undefined, timeline_url: undefined,
      draft: undefined, body_html: undefined, body_text: undefined, type: undefined, sub_issues_summary: undefined };
    if (i.plain) delete out.pull_request;
    else out.pull_request = { url: `${this.base}/repos/${full}/pulls/${i.number}`, html_url: `${this.base}/${full}/pull/${i.number}`,
      diff_url: `${this.base}/${full}/pull/${i.number}.diff`, patch_url: `${this.base}/${full}/pull/${i.number}.patch`, merged_at: i.merged_at || null };
    return out;
  }

  checkRun(repo, c) {
    const full = `${repo.owner}/${repo.name}`;
    const url = `${this.base}/repos/${full}/check-runs/${c.id}`;
    return { ...this.api.example("check-run"), id: c.id, node_id: `CR_${c.id}`, name: c.name, head_sha: c.head_sha, external_id: c.external_id || "",
      url, html_url: `${this.base}/${full}/runs/${c.id}`, details_url: c.details_url || null, status: c.status, conclusion: c.conclusion || null,
      started_at: c.started_at || null, completed_at: c.completed_at || null,
      output: { title: c.output?.title ?? null, summary: c.output?.summary ?? null, text: c.output?.text ?? null,
        annotations_count: 0, annotations_url: `${url}/annotations` },
      pull_requests: [], check_suite: { id: 5 } };
  }

  // --- pagination ---------------------------------------------------------------------

  page(url, items) {
    const perPage = Math.min(Number(url.searchParams.get("per_page") || 30), 100);
    const page = Number(url.searchParams.get("page") || 1);
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const link = (n, rel) => {
      const u = new URL(url.href);
      u.searchParams.set("page", String(n));
      return `<${this.base}${u.pathname}${u.search}>; rel="${rel}"`;
    };
    const links = [];
    if (page > 1) links.push(link(page - 1, "prev"));
    if (page < last) links.push(link(page + 1, "next"), link(last, "last"));
    if (page > 1) links.push(link(1, "first"));
    return { body: items.slice((page - 1) * perPage, page * perPage), headers: links.length ? { link: links.join(", ") } : {} };
  }

  // --- operations ---------------------------------------------------------------------

  // Dispatches one validated request. Returns { status, body, headers }.
  handle(operationId, params, url, body, headers) {
    if (operationId === "apps/create-installation-access-token") return this.accessToken(params, body, headers);
    if (operationId === "apps/get-authenticated") {  // GET /app: the JWT's App
      const app = this.appOf(headers);
      const example = this.api.example("integration");
      return { status: 200, body: { ...example, id: Number(app.id), slug: app.slug, name: app.name || app.slug,
        node_id: `A_${app.id}`, client_id: `Iv1.${app.id}`, html_url: `${this.base}/apps/${app.slug}`,
        owner: this.user(app.owner || "acme", "Organization") } };
    }
    if (operationId === "users/get-by-username")  // public: GitHub answers it without a token too
      return { status: 200, body: this.fullUser(params.username, params.username.endsWith("[bot]") ? "Bot" : "User") };
    if (operationId === "apps/create-from-manifest") return this.convertManifest(params);
    const token = this.authenticate(headers["authorization"]);
    if (operationId === "users/get-authenticated") {  // GitHub refuses it to installation tokens
      if (token.kind === "installation")
        throw new HttpError(403, { message: "Resource not accessible by integration", documentation_url: DOCS, status: "403" });
      return { status: 200, body: this.fullUser(token.login, token.type) };
    }
    const repo = params.owner ? this.repo(params.owner, params.repo) : null;
    const now = iso();
    const issue = (n) => {
      const found = repo.issues.find((p) => p.number === Number(n));
      if (!found) throw new HttpError(404, { message: "Not Found", documentation_url: DOCS, status: "404" });
      return found;
    };
    const pr = (n) => {
      const found = repo.issues.find((p) => p.number === Number(n) && !p.plain);
      if (!found) throw new HttpError(404, { message: "Not Found", documentation_url: DOCS, status: "404" });
      return found;
    };
    switch (operationId) {
      case "repos/get":
        this.require(token, repo, "metadata|contents|pull_requests", "read");
        return { status: 200, body: this.repository(repo) };
      case "repos/get-branch": {
        this.require(token, repo, "metadata|contents|pull_requests", "read");
        const sha = this.refSha(repo, params.branch);
        if (!sha) throw new HttpError(404, { message: "Branch not found", documentation_url: DOCS, status: "404" });
        const b = this.api.example("branch-with-protection");
        const isProtected = repo.protected.has(params.branch);
        return { status: 200, body: { ...b, name: params.branch, commit: { ...b.commit, sha }, protected: isProtected,
          protection: { enabled: isProtected, required_status_checks: { enforcement_level: "off", contexts: [], checks: [] } }, protection_url: `${this.base}/repos/${repo.owner}/${repo.name}/branches/${params.branch}/protection` } };
      }
      case "pulls/list": {
        this.require(token, repo, "pull_requests", "read");
        const state = url.searchParams.get("state") || "open";
        const head = url.searchParams.get("head");
        const base = url.searchParams.get("base");
 const items = repo.issues.filter((p) => !p.plain && (state === "all" || p.state === state) &&
          (!head || `${repo.owner}:${p.head}`.toLowerCase() === head.toLowerCase() || (!head.includes(":") && p.head === head)) &&
          (!base || p.base === base));
        items.sort((a, b) => b.number - a.number);
        const page = this.page(url, items.map((p) => this.pullSimple(repo, p)));
        return { status: 200, ...page };
      }
      case "pulls/get":
        this.require(token, repo, "pull_requests", "read");
        return { status: 200, body: this.pull(repo, pr(params.pull_number)) };
      case "pulls/create": {
        this.require(token, repo, "pull_requests");
        const head = body.head.includes(":") ? body.head.split(":")[1] : body.head;
        const errors = [];
        if (!body.title) errors.push({ resource: "PullRequest", field: "title", code: "missing_field" });
        const headSha = this.refSha(repo, head);
        if (!headSha) errors.push({ resource: "PullRequest", field: "head", code: "invalid" });
        const baseSha = this.refSha(repo, body.base);
        if (!baseSha) errors.push({ resource: "PullRequest", field: "base", code: "invalid" });
        if ((body.body || "").length > 65536)
          errors.push({ resource: "Issue", field: "body", code: "custom", message: "body is too long (maximum is 65536 characters)" });
        if (repo.issues.some((p) => p.state === "open" && p.head === head && p.base === body.base))
          errors.push({ resource: "PullRequest", code: "custom", message: `A pull request already exists for ${repo.owner}:${head}.` });
        if (errors.length) throw validationFailed(errors);
        const created = { id: this.id(), number: repo.nextNumber++, state: "open", title: body.title, body: body.body ?? null,
          head, base: body.base, head_sha: headSha, base_sha: baseSha, user: this.user(token.login, token.type), labels: [],
          created_at: now, updated_at: now, closed_at: null, merged_at: null, maintainer_can_modify: body.maintainer_can_modify };
        repo.issues.push(created);
        const out = this.pull(repo, created);
        return { status: 201, body: out, headers: { location: out.url } };
      }
      case "pulls/update": {
        this.require(token, repo, "pull_requests");
        const p = pr(params.pull_number);
        if ((body.body || "").length > 65536)
          throw validationFailed([{ resource: "Issue", field: "body", code: "custom", message: "body is too long (maximum is 65536 characters)" }]);
        if (body.state === "open" && p.merged_at) throw validationFailed([{ resource: "PullRequest", code: "custom", message: "Cannot reopen a merged pull request" }]);
        if (body.title !== undefined) p.title = body.title;
        if (body.body !== undefined) p.body = body.body;
        if (body.base !== undefined) p.base = body.base;
        if (body.state && body.state !== p.state) {
          p.state = body.state;
          p.closed_at = body.state === "closed" ? now : null;
          p.closed_by = body.state === "closed" ? token.login : undefined;
        }
        p.updated_at = now;
        return { status: 200, body: this.pull(repo, p) };
      }
      case "issues/list-labels-for-repo":
        this.require(token, repo, "issues|pull_requests", "read");
        return { status: 200, ...this.page(url, [...repo.labels.values()].map((l) => this.label(repo, l))) };
      case "issues/get-label": {
        this.require(token, repo, "issues|pull_requests", "read");
        const l = repo.labels.get(params.name);
        if (!l) throw new HttpError(404, { message: "Not Found", documentation_url: DOCS, status: "404" });
        return { status: 200, body: this.label(repo, l) };
      }
      case "issues/create-label": {
        this.require(token, repo, "issues|pull_requests");
        if (repo.labels.has(body.name)) throw validationFailed([{ resource: "Label", code: "already_exists", field: "name" }]);
        if (body.color && !/^[0-9a-fA-F]{6}$/.test(body.color)) throw validationFailed([{ resource: "Label", code: "invalid", field: "color" }]);
        const l = { id: this.id(), name: body.name, color: (body.color || "ededed").toLowerCase(), description: body.description };
        repo.labels.set(l.name, l);
        return { status: 201, body: this.label(repo, l) };
      }
      case "issues/add-labels": {
        this.require(token, repo, "issues|pull_requests");
        const p = pr(params.issue_number);
        const names = Array.isArray(body) ? body : body.labels.map((l) => (typeof l === "string" ? l : l.name));
        for (const n of names) {
          // GitHub creates a label it does not know, with the default color.
          if (!repo.labels.has(n)) repo.labels.set(n, { id: this.id(), name: n, color: "ededed" });
          if (!p.labels.includes(n)) p.labels.push(n);
        }
        return { status: 200, body: p.labels.map((n) => this.label(repo, repo.labels.get(n))) };
      }
      case "issues/list-for-repo": {
        this.require(token, repo, "issues|pull_requests", "read");
        const state = url.searchParams.get("state") || "open";
        const labels = (url.searchParams.get("labels") || "").split(",").filter(Boolean);
        const items = repo.issues.filter((i) => (state === "all" || i.state === state) && labels.every((l) => (i.labels || []).includes(l)));
        items.sort((a, b) => b.number - a.number);
        return { status: 200, ...this.page(url, items.map((i) => this.issue(repo, i))) };
      }
      case "issues/create": {
        this.require(token, repo, "issues");
        if (!body.title) throw validationFailed([{ resource: "Issue", field: "title", code: "missing_field" }]);
        const names = (body.labels || []).map((l) => (typeof l === "string" ? l : l.name));
        for (const n of names) if (!repo.labels.has(n)) repo.labels.set(n, { id: this.id(), name: n, color: "ededed" });
        const i = { id: this.id(), number: repo.nextNumber++, plain: true, state: "open", title: String(body.title), body: body.body ?? null,
          labels: names, user: this.user(token.login, token.type), created_at: now, updated_at: now };
        repo.issues.push(i);
        const out = this.issue(repo, i);
        return { status: 201, body: out, headers: { location: out.url } };
      }
      case "issues/update": {
        this.require(token, repo, "issues");
        const i = issue(params.issue_number);
        if (body.title !== undefined && body.title !== null) i.title = String(body.title);
        if (body.body !== undefined) i.body = body.body;
        if (body.state && body.state !== i.state) {
          i.state = body.state;
          i.closed_at = body.state === "closed" ? now : null;
        }
        i.updated_at = now;
        return { status: 200, body: this.issue(repo, i) };
      }
      case "checks/list-for-ref": {
        this.require(token, repo, "checks", "read");
        const name = url.searchParams.get("check_name");
        const runs = repo.checkRuns.filter((c) => (c.head_sha === params.ref) && (!name || c.name === name)).map((c) => this.checkRun(repo, c));
        return { status: 200, body: { total_count: runs.length, check_runs: runs } };
      }
      case "issues/list-comments": {
        this.require(token, repo, "issues|pull_requests", "read");
        issue(params.issue_number);
        const items = repo.comments.filter((c) => c.issue === Number(params.issue_number)).map((c) => this.comment(repo, c));
        return { status: 200, ...this.page(url, items) };
      }
      case "issues/create-comment": {
        this.require(token, repo, "issues|pull_requests");
        issue(params.issue_number);
        const c = { id: this.id(), issue: Number(params.issue_number), body: body.body, user: this.user(token.login, token.type), created_at: now, updated_at: now };
        repo.comments.push(c);
        return { status: 201, body: this.comment(repo, c), headers: { location: `${this.base}/repos/${repo.owner}/${repo.name}/issues/comments/${c.id}` } };
      }
      case "issues/update-comment": {
        this.require(token, repo, "issues|pull_requests");
        const c = repo.comments.find((x) => x.id === Number(params.comment_id));
        if (!c) throw new HttpError(404, { message: "Not Found", documentation_url: DOCS, status: "404" });
        c.body = body.body;
        c.updated_at = now;
        return { status: 200, body: this.comment(repo, c) };
      }
      case "repos/get-collaborator-permission-level": {
        this.require(token, repo, "metadata|contents|pull_requests", "read");
        const permission = repo.collaborators[params.username] || "none";
        const example = this.api.example("repository-collaborator-permission-response-if-user-has-admin-permissions");
        const user = { ...example.user, ...this.user(params.username), permissions: { admin: permission === "admin", maintain: false,
          push: permission === "admin" || permission === "write", triage: permission !== "none", pull: permission !== "none" },
          role_name: permission };
        return { status: 200, body: { ...example, permission, role_name: permission, user } };
      }
      case "checks/create": {
        if (token.kind !== "installation")
          throw new HttpError(403, { message: "You must authenticate via a GitHub App.", documentation_url: DOCS, status: "403" });
        this.require(token, repo, "checks");
        const c = { id: this.id(), ...body, status: body.conclusion ? "completed" : body.status || "queued" };
        repo.checkRuns.push(c);
        return { status: 201, body: this.checkRun(repo, c) };
      }
      case "checks/update": {
        if (token.kind !== "installation")
          throw new HttpError(403, { message: "You must authenticate via a GitHub App.", documentation_url: DOCS, status: "403" });
        this.require(token, repo, "checks");
        const c = repo.checkRuns.find((x) => x.id === Number(params.check_run_id));
        if (!c) throw new HttpError(404, { message: "Not Found", documentation_url: DOCS, status: "404" });
        Object.assign(c, body);
        if (body.conclusion) c.status = "completed";
        return { status: 200, body: this.checkRun(repo, c) };
      }
      case "checks/get": {
        const c = repo.checkRuns.find((x) => x.id === Number(params.check_run_id));
        if (!c) throw new HttpError(404, { message: "Not Found", documentation_url: DOCS, status: "404" });
        return { status: 200, body: this.checkRun(repo, c) };
      }
      default:
        throw new HttpError(501, { message: `the fake GitHub does not implement ${operationId}`, status: "501" });
    }
  }

  accessToken(params, body, headers) {
    const app = this.appOf(headers);
    const installation = app.installations.find((i) => String(i.id) === String(params.installation_id));
    if (!installation) throw new HttpError(404, { message: "Not Found", documentation_url: DOCS, status: "404" });
    const permissions = { ...installation.permissions };
    if (body?.permissions) {
      for (const key of Object.keys(permissions)) if (!(key in body.permissions)) delete permissions[key];
      for (const [key, level] of Object.entries(body.permissions))
        if (!permissions[key] || (permissions[key] === "read" && level === "write"))
          throw validationFailed([{ resource: "Installation", code: "invalid", field: "permissions", message: `The permissions requested are not granted to this installation: ${key}=${level}` }]);
    }
    const token = "ghs_" + randomBytes(18).toString("hex");
    const expires = Date.now() / 1000 + this.tokenTtl;
    this.tokens.set(token, { token, kind: "installation", type: "Bot", login: `${app.slug}[bot]`, permissions,
      repos: body?.repositories, expires_at: expires, installation: installation.id });
    this.tokensIssued++;
    const example = this.api.example("installation-token");
    return { status: 201, body: { token, expires_at: iso(expires), permissions, repository_selection: body?.repositories ? "selected" : "all",
      single_file: example.single_file, has_multiple_single_files: false, single_file_paths: [] } };
  }

  // Everything a test may want to assert on.
  dump() {
    const repos = {};
    for (const [key, r] of this.repos)
      repos[key] = {
        pulls: r.issues.filter((p) => !p.plain).map((p) => ({ number: p.number, state: p.state, title: p.title, body: p.body, head: p.head, base: p.base,
          labels: p.labels, user: p.user.login, merged: !!p.merged_at, closed_by: p.closed_by || null })),
        labels: [...r.labels.values()].map((l) => ({ name: l.name, color: l.color, description: l.description ?? null })),
        issues: r.issues.filter((i) => i.plain).map((i) => ({ number: i.number, state: i.state, title: i.title, body: i.body ?? null,
          labels: i.labels || [] })),
        comments: r.comments.map((c) => ({ id: c.id, issue: c.issue, body: c.body, user: c.user.login })),
        check_runs: r.checkRuns.map((c) => ({ id: c.id, name: c.name, head_sha: c.head_sha, status: c.status, conclusion: c.conclusion || null,
          title: c.output?.title ?? null, summary: c.output?.summary ?? null, details_url: c.details_url ?? null })),
      };
    return { repos, tokens_issued: this.tokensIssued };
  }

  merge(owner, name, number) {
    const p = this.repo(owner, name).issues.find((x) => x.number === number);
    p.state = "closed";
    p.merged_at = p.closed_at = iso();
  }
}
