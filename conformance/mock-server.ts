/**
 * The other direction: a mock server that serves the transcripts, so a client (ours, or a
 * third party's generated client) can be tested against them. Each transcript is served
 * at its own prefix, `{mock}/<area>/<name>/v1` as `{base_url}` (and `{mock}/<area>/<name>`
 * as `{origin}`). A request is matched to the next step of that transcript (method, path,
 * query, key role and JSON body, where the transcript's `{{variables}}` match any value
 * and are bound by the match), and answered with what the reference server answered to
 * that step: the golden (goldens/<area>/<name>.yaml), with the variables filled in.
 *
 * Steps are matched strictly in order: a request must be the transcript's next step (or
 * the current one again when it repeats, or the first, to start over), with the same
 * method, path, query, key role and scheme (Bearer or x-api-key) and JSON body. Anything
 * else is answered 422 with error code MOCK_MISMATCH (a status and code the interface
 * never uses, so a client test cannot mistake it for an answer of the service) and the
 * field-level differences from the expected request, in `error.message` and
 * `error.differences`.
 *
 * Answers speak the profile's names: the goldens were recorded with profiles/reference.json,
 * so every whole value (a JSON string, or a `/`-separated segment of one) that is one of
 * its account ids or model names becomes the profile's value for the same role. A value
 * inside a longer name (`tiny-chat` in `tiny-chat-community`) is never replaced.
 */
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { loadGolden, longMarker, PROFILE_ROOTS, type Golden, type GoldenExchange } from "./golden.ts";
import { isPlainObject } from "./matchers.ts";
import { loadProfile, PROFILE_KEYS, type Profile } from "./profile.ts";
import { parseSse, formatSse } from "./sse.ts";
import { evaluate, TemplateError } from "./template.ts";
import { kitRoot, loadTranscripts, transcriptsDir, type Transcript } from "./transcript.ts";

export interface MockServerOptions {
  profile: Profile;
  port?: number;
  host?: string;
  transcripts?: Transcript[];
  goldensDir?: string;
}

export interface MockServer {
  url: string;
  /** Where a transcript is served: its `{base_url}` and `{origin}`. */
  targetFor(t: Transcript | string): { baseUrl: string; origin: string };
  /** Requests that matched no step (for the self-test's report). */
  unmatched: string[];
  close(): Promise<void>;
}

/**
 * Requests declaring a body larger than this are answered without reading it: the
 * reference server's JSON body limit, over which it refuses a body unread, so no golden
 * depends on such a body.
 */
const UNREAD_BODY_BYTES = 8 * 1024 * 1024;

interface Entry extends GoldenExchange {
  step: number;
  repeated: boolean;
}

interface Session {
  cursor: number;
  vars: Map<string, unknown>;
}

export async function startMockServer(options: MockServerOptions): Promise<MockServer> {
  const transcripts = options.transcripts ?? loadTranscripts(transcriptsDir());
  const goldensDir = options.goldensDir ?? path.join(kitRoot(), "goldens");
  const served = new Map<string, { golden: Golden; entries: Entry[] }>();
  const byId = new Map(transcripts.map((t) => [t.id, t]));
  for (const t of transcripts) {
    const golden = loadGolden(goldensDir, t.id);
    if (!golden) continue;
    served.set(t.id, {
      golden,
      entries: golden.steps.flatMap((s) =>
        s.exchanges.map((e) => ({ ...e, step: s.step, repeated: s.repeated === true })),
      ),
    });
  }
  const sessions = new Map<string, Session>();
  const unmatched: string[] = [];
  const renames = recordedNames(options.profile);

  const server = http.createServer((req, res) => {
    const answer = (body: Buffer) => {
      try {
        handle(req, body, res);
      } catch (error) {
        reply(res, 500, {
          error: { message: `mock: ${(error as Error).message}`, type: "server_error", code: "INTERNAL", param: null },
        });
      }
    };
    // Transcripts declare large bodies without sending them (`declaredLength`), to prove
    // they are answered unread: so does the mock, closing the connection after the answer.
    if (Number(req.headers["content-length"]) > UNREAD_BODY_BYTES) {
      res.setHeader("connection", "close");
      return answer(Buffer.alloc(0));
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => answer(Buffer.concat(chunks)));
  });

  function handle(req: http.IncomingMessage, body: Buffer, res: http.ServerResponse): void {
    const url = new URL(req.url ?? "/", "http://mock");
    const parts = url.pathname.split("/");
    const id = `${parts[1] ?? ""}/${parts[2] ?? ""}`;
    const rest = `/${parts.slice(3).join("/")}`;
    const entry = served.get(id);
    if (!entry) return notFound(res, `mock: no transcript ${id} (serve paths are /<area>/<name>/v1/…)`);
    let session = sessions.get(id);
    if (!session) {
      session = { cursor: -1, vars: new Map() };
      sessions.set(id, session);
    }
    const incoming = {
      method: (req.method ?? "GET").toUpperCase(),
      path: rest,
      query: url.searchParams,
      headers: req.headers,
      body,
      json: parseJson(req.headers["content-type"], body),
    };
    // Strictly in order: the next step; the current one again only when it repeats its
    // request; else the first (the client has started the transcript over).
    const current = entry.entries[session.cursor];
    const next = session.cursor + 1 < entry.entries.length ? session.cursor + 1 : undefined;
    const order = [
      ...(next !== undefined ? [next] : []),
      ...(current?.repeated ? [session.cursor] : []),
      ...(next !== 0 ? [0] : []),
    ];
    const transcript = byId.get(id);
    for (const i of order) {
      const candidate = entry.entries[i] as Entry;
      const restart = i === 0 || (i <= session.cursor && !(i === session.cursor && current?.repeated));
      const vars = new Map(restart ? [] : session.vars);
      if (!requestMatches(candidate, incoming, vars, options.profile, schemeOf(transcript, candidate.step))) continue;
      session.cursor = i;
      session.vars = vars;
      learnRun(vars);
      return serve(res, candidate, vars, {
        golden: entry.golden,
        profile: options.profile,
        renames,
        setupValue: (name) => setupValue(id, name),
        run: () => globalRun,
      });
    }
    const show = (e: Entry) => `${e.request.method} ${e.request.base === "origin" ? "" : "/v1"}${e.request.path}`;
    unmatched.push(`${id}: ${incoming.method} ${rest}`);
    // Over: the transcript starts again with its first step.
    const expectedEntry = entry.entries[next ?? 0] as Entry;
    const differences = requestDifferences(
      expectedEntry,
      incoming,
      next === undefined ? new Map() : new Map(session.vars),
      options.profile,
      schemeOf(transcript, expectedEntry.step),
    );
    const message = `mock: ${incoming.method} ${rest} is not step ${expectedEntry.step} of ${id}, which is next${next === undefined ? " (the transcript was over: it starts again)" : ""}: ${show(expectedEntry)}; ${differences.join("; ")}`;
    reply(res, 422, {
      error: {
        message,
        type: "invalid_request_error",
        code: "MOCK_MISMATCH",
        param: differences[0]?.split(":")[0] ?? null,
        differences,
      },
    });
  }

  /** The client's `{{run}}` (one per run of the kit, shared by all transcripts), learnt from any request. */
  let globalRun: string | undefined;
  function learnRun(vars: Map<string, unknown>): void {
    const run = vars.get("run");
    const tag = vars.get("tag");
    if (typeof run === "string") globalRun = run;
    else if (typeof tag === "string") globalRun = tag.replace(/-[0-9a-f]{6}$/, "");
  }

  /** `alias.key` of a transcript's `uses`: the setup's export, filled from the setup's own session. */
  function setupValue(transcriptId: string, name: string): unknown {
    const [alias, key] = name.split(".", 2) as [string, string | undefined];
    const setupId = byId.get(transcriptId)?.uses[alias];
    if (!setupId || key === undefined) return undefined;
    const exported = byId.get(setupId)?.exports[key];
    const setup = served.get(setupId);
    const session = sessions.get(setupId);
    if (typeof exported !== "string" || !setup || !session) return undefined;
    const value = fill(exported, session.vars, {
      golden: setup.golden,
      profile: options.profile,
      renames,
      setupValue: (n) => setupValue(setupId, n),
      run: () => globalRun,
    });
    return value.includes("{{") ? undefined : value;
  }

  server.listen(options.port ?? 0, options.host ?? "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host ?? "127.0.0.1"}:${port}`;
  return {
    url,
    unmatched,
    targetFor: (t) => {
      const tid = typeof t === "string" ? t : t.id;
      return { baseUrl: `${url}/${tid}/v1`, origin: `${url}/${tid}` };
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

function parseJson(type: string | undefined, body: Buffer): unknown {
  if (!type?.includes("json") || type.includes("jsonl")) return undefined;
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
}

interface Incoming {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  json: unknown;
}

function requestMatches(
  entry: Entry,
  incoming: Incoming,
  vars: Map<string, unknown>,
  profile: Profile,
  scheme: Scheme,
): boolean {
  return requestDifferences(entry, incoming, vars, profile, scheme, 1).length === 0;
}

/**
 * How a request differs from a step's, field by field (`body.stream: unexpected field`,
 * `query.pageSize: expected "2", got "3"`, `auth: expected Bearer key of secondary`);
 * empty when it matches, binding the step's unbound variables in `vars`.
 */
function requestDifferences(
  entry: Entry,
  incoming: Incoming,
  vars: Map<string, unknown>,
  profile: Profile,
  scheme: Scheme,
  limit = 8,
): string[] {
  const out: string[] = [];
  const r = entry.request;
  if (r.method !== incoming.method) out.push(`method: expected ${r.method}, got ${incoming.method}`);
  const [goldenPath, goldenQuery = ""] = r.path.split("?") as [string, string?];
  const full = r.base === "origin" ? goldenPath : `/v1${goldenPath}`;
  if (!matchTemplate(safeDecode(full), safeDecode(incoming.path), vars, profile))
    out.push(`path: expected ${full}, got ${incoming.path}`);
  if (out.length >= limit) return out;
  const want = new URLSearchParams(goldenQuery);
  const wantKeys = [...new Set(want.keys())];
  const gotKeys = [...new Set(incoming.query.keys())];
  for (const k of gotKeys) if (!wantKeys.includes(k)) out.push(`query.${k}: unexpected parameter`);
  for (const k of wantKeys) {
    if (!gotKeys.includes(k)) out.push(`query.${k}: missing parameter`);
    else if (!matchTemplate(want.get(k) ?? "", incoming.query.get(k) ?? "", vars, profile))
      out.push(`query.${k}: expected ${JSON.stringify(want.get(k))}, got ${JSON.stringify(incoming.query.get(k))}`);
  }
  const auth = authDifference(r.auth ?? "primary", scheme, incoming.headers, profile);
  if (auth) out.push(auth);
  if (out.length >= limit) return out.slice(0, limit);
  if (r.json !== undefined)
    out.push(...jsonDifferences(r.json, incoming.json, vars, profile, "body", limit - out.length));
  return out.slice(0, limit);
}

type Scheme = "bearer" | "x-api-key";

/** The key scheme a golden's step used: its transcript's `auth.scheme`. */
function schemeOf(t: Transcript | undefined, stepNumber: number): Scheme {
  const step = stepNumber > 1000 ? t?.cleanup[stepNumber - 1001] : t?.steps[stepNumber - 1];
  const auth = step?.request.auth;
  return typeof auth === "object" && auth.scheme === "x-api-key" ? "x-api-key" : "bearer";
}

function authDifference(
  role: string,
  scheme: Scheme,
  headers: http.IncomingHttpHeaders,
  profile: Profile,
): string | undefined {
  if (role === "literal") return undefined;
  const authorization = headers.authorization;
  const apiKey = headers["x-api-key"];
  if (role === "none") return authorization === undefined && apiKey === undefined ? undefined : "auth: expected no key";
  const key = profile.accounts[role]?.key;
  if (!key) return `auth: the profile has no account ${role}`;
  if (scheme === "x-api-key")
    return apiKey === key && authorization === undefined ? undefined : `auth: expected the key of ${role} in x-api-key`;
  return authorization === `Bearer ${key}` && apiKey === undefined
    ? undefined
    : `auth: expected Authorization: Bearer with the key of ${role}`;
}

function profileValue(name: string, profile: Profile): unknown {
  const root = name.split(/[.[]/)[0] as string;
  // The addresses are the mock's own (one per transcript), not the profile's.
  if (!PROFILE_ROOTS.has(root) || root === "baseUrl" || root === "origin") return undefined;
  const scope = (n: string): unknown =>
    n === "account"
      ? profile.accounts.primary.id
      : n === "otherAccount"
        ? profile.accounts.secondary.id
        : (Reflect.get(profile, n) as unknown);
  try {
    return evaluate(name, scope);
  } catch (error) {
    if (error instanceof TemplateError) return undefined;
    throw error;
  }
}

const PLACEHOLDER = /\{\{\s*([^{}]+?)\s*\}\}/g;

/** Matches a template string against a value, binding its unbound variables. */
function matchTemplate(template: string, value: string, vars: Map<string, unknown>, profile: Profile): boolean {
  if (!template.includes("{{")) return template === value;
  const names: string[] = [];
  let re = "^";
  let last = 0;
  for (const m of template.matchAll(PLACEHOLDER)) {
    re += escapeRe(template.slice(last, m.index));
    const name = m[1] as string;
    const known = vars.has(name) ? vars.get(name) : profileValue(name, profile);
    if (known !== undefined) re += escapeRe(typeof known === "string" ? known : JSON.stringify(known));
    else {
      re += "(.+?)";
      names.push(name);
    }
    last = (m.index ?? 0) + m[0].length;
  }
  re += `${escapeRe(template.slice(last))}$`;
  const found = new RegExp(re, "s").exec(value);
  if (!found) return false;
  const bound = new Map<string, string>();
  for (const [i, name] of names.entries()) {
    const v = found[i + 1] as string;
    if (bound.has(name) && bound.get(name) !== v) return false;
    bound.set(name, v);
  }
  for (const [k, v] of bound) vars.set(k, v);
  return true;
}

/** Field-level differences of a JSON body from a golden's (with `{{variables}}` matching and binding). */
function jsonDifferences(
  template: unknown,
  value: unknown,
  vars: Map<string, unknown>,
  profile: Profile,
  at: string,
  limit: number,
): string[] {
  const got = (v: unknown) => (v === undefined ? "nothing" : JSON.stringify(v)?.slice(0, 80));
  if (typeof template === "string" && template.startsWith("{{$long:"))
    return typeof value === "string" && longMarker(value) === template
      ? []
      : [`${at}: expected ${template}, got ${got(value)}`];
  if (typeof template === "string")
    return typeof value === "string" && matchTemplate(template, value, vars, profile)
      ? []
      : [`${at}: expected ${JSON.stringify(template)}, got ${got(value)}`];
  if (Array.isArray(template)) {
    if (!Array.isArray(value)) return [`${at}: expected an array, got ${got(value)}`];
    if (value.length !== template.length) return [`${at}: expected ${template.length} items, got ${value.length}`];
    return template
      .flatMap((t, i) => jsonDifferences(t, value[i], vars, profile, `${at}[${i}]`, limit))
      .slice(0, limit);
  }
  if (isPlainObject(template)) {
    if (!isPlainObject(value)) return [`${at}: expected an object, got ${got(value)}`];
    const out: string[] = [];
    for (const k of Object.keys(value)) if (!(k in template)) out.push(`${at}.${k}: unexpected field`);
    for (const k of Object.keys(template)) {
      if (out.length >= limit) break;
      if (!(k in value)) out.push(`${at}.${k}: missing field`);
      else out.push(...jsonDifferences(template[k], value[k], vars, profile, `${at}.${k}`, limit - out.length));
    }
    return out.slice(0, limit);
  }
  return template === value ? [] : [`${at}: expected ${JSON.stringify(template)}, got ${got(value)}`];
}

interface FillContext {
  golden: Golden;
  profile: Profile;
  /** Names of the recording profile → the profile's (see recordedNames). */
  renames: Map<string, string>;
  /** Exports of the setups the transcript uses, as the client's own setup run made them. */
  setupValue: (name: string) => unknown;
  /** The client's run id, once a request showed it. */
  run: () => string | undefined;
}

/**
 * Fills `{{name}}` in golden text: variables bound by the client's requests, then the
 * profile, then the setups' exports, then the values recorded (which become bound).
 */
function fill(text: string, vars: Map<string, unknown>, ctx: FillContext, depth = 0): string {
  return text.replace(PLACEHOLDER, (whole, name: string, offset: number) => {
    // A profile value recorded inside a longer name (`{{models.chat}}-community`) was not
    // that value: the name is kept as recorded, never given the profile's value in its middle.
    const inside = NAME_CHAR.test(text[offset - 1] ?? "") || NAME_CHAR.test(text[offset + whole.length] ?? "");
    if (inside && profileValue(name, ctx.profile) !== undefined) {
      const recorded = profileValue(name, RECORDING_PROFILE());
      if (recorded !== undefined) return String(recorded);
    }
    let v = vars.get(name);
    if (v === undefined) v = profileValue(name, ctx.profile);
    if (v === undefined && name.includes(".")) v = ctx.setupValue(name);
    if (v === undefined && name === "run") v = ctx.run();
    if (v === undefined && name in ctx.golden.vars) {
      v = ctx.golden.vars[name];
      // A recorded value may be written with other variables (depth-limited against cycles).
      if (typeof v === "string" && depth < 5) v = fill(v, vars, ctx, depth + 1);
    }
    if (v === undefined) return whole;
    vars.set(name, v);
    return typeof v === "string" ? v : JSON.stringify(v);
  });
}

const NAME_CHAR = /[A-Za-z0-9_-]/;

let recordingProfile: Profile | undefined;
/** The profile the goldens were recorded with. */
function RECORDING_PROFILE(): Profile {
  recordingProfile ??= loadProfile(path.join(kitRoot(), "profiles/reference.json"));
  return recordingProfile;
}

/**
 * The recording profile's account ids and model names → the profile's for the same role
 * (the first role in the documented order wins when the recording used one name for
 * several roles); names the profile leaves out stay as recorded.
 */
function recordedNames(profile: Profile): Map<string, string> {
  const recorded = RECORDING_PROFILE();
  const out = new Map<string, string>();
  for (const role of PROFILE_KEYS.accounts) {
    const from = recorded.accounts[role]?.id;
    const to = profile.accounts[role]?.id;
    if (from && to && !out.has(from)) out.set(from, to);
  }
  for (const role of PROFILE_KEYS.models) {
    const from = recorded.models[role];
    const to = profile.models[role];
    if (from && to && !out.has(from)) out.set(from, to);
  }
  return out;
}

/** Whole values only: a string equal to a recorded name, or each `/`-separated segment equal to one. */
function rename(value: string, renames: Map<string, string>): string {
  if (renames.size === 0) return value;
  const whole = renames.get(value);
  if (whole !== undefined) return whole;
  return value.includes("/")
    ? value
        .split("/")
        .map((segment) => renames.get(segment) ?? segment)
        .join("/")
    : value;
}

function fillJson(value: unknown, vars: Map<string, unknown>, ctx: FillContext): unknown {
  if (typeof value === "string") return rename(fill(value, vars, ctx), ctx.renames);
  if (Array.isArray(value)) return value.map((v) => fillJson(v, vars, ctx));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = fillJson(v, vars, ctx);
    return out;
  }
  return value;
}

function serve(res: http.ServerResponse, entry: Entry, vars: Map<string, unknown>, ctx: FillContext): void {
  const r = entry.response;
  const headers: Record<string, string> = { "x-request-id": `req_${randomBytes(12).toString("hex")}` };
  for (const [k, v] of Object.entries(r.headers ?? {})) headers[k] = v;
  if (r.sse !== undefined) {
    const events = parseSse(r.sse).map((e) => ({
      event: e.event,
      data: e.json === undefined ? e.data : JSON.stringify(fillJson(e.json, vars, ctx)),
    }));
    res.writeHead(r.status, headers);
    res.end(formatSse(events));
    return;
  }
  let text = "";
  if (r.body !== undefined) text = JSON.stringify(fillJson(r.body, vars, ctx));
  else if (r.text !== undefined) text = fill(r.text, vars, ctx);
  res.writeHead(r.status, headers);
  res.end(text);
}

function notFound(res: http.ServerResponse, message: string): void {
  reply(res, 404, { error: { message, type: "not_found_error", code: "NOT_FOUND", param: null } });
}

function reply(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, {
    "content-type": "application/json",
    "x-request-id": `req_${randomBytes(12).toString("hex")}`,
  });
  res.end(JSON.stringify(body));
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
