/**
 * Whole HTTP requests for the contract's operations, as fast-check arbitraries: method,
 * request target (path parameters and query), headers (keys, the operation's header
 * parameters, content type and encoding, odd extras), body, its framing and how it is
 * delivered. Most cases are ordinary requests with one or two hostile parts, so that
 * checks deep inside the handlers are reached as well as the parsers in front of them.
 */
import { METHODS } from "node:http";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import type { FuzzContract as Contract, FuzzOperation, ParamSpec, Schema } from "./operations.ts";
import { httpProblems } from "./check.ts";
import { anyJson, describeJson, nestedJson, schemaArbitrary, toJsonText } from "./schema.ts";
import { chunkEncode, type Delivery, type WireRequest } from "./wire.ts";

/** Resources that exist on the server under test, made before fuzzing starts. */
export interface FuzzFixtures {
  /** The account fuzzed (the profile's primary). */
  account: string;
  /** Another account (the profile's secondary): its key and id only probe isolation, never write. */
  otherAccount: string;
  /** Key by account id: the two accounts'. */
  keys: Record<string, string>;
  /** The path of `{base_url}` (`/v1`), which every operation's path follows. */
  basePath: string;
  /** The Host header of an ordinary request (`127.0.0.1:8080`). */
  host: string;
  /** What the fuzzer's own ids start with (datasets, output models, idempotency keys): it cleans up only those. */
  idPrefix: string;
  /** A trainable base model's full name (`accounts/maas/models/…`), when the profile names one. */
  baseModel: string;
  /** Datasets the fuzzer reads but must not delete (a DELETE picks among `scratchDatasets`). */
  datasets: string[];
  scratchDatasets: string[];
  /** Full version names: `accounts/{account}/datasets/x/versions/1`. */
  versions: string[];
  sftJobs: string[];
  dpoJobs: string[];
  models: string[];
}

export interface FuzzCase {
  /** The operation the case was made for; `(unrouted)` for paths outside the contract. */
  operationId: string;
  method: string;
  /** The request target as bytes (a latin1 string). */
  target: string;
  /** In order; values are bytes (latin1 strings). */
  headers: [string, string][];
  /** Exactly as sent, after framing. */
  body: Buffer;
  delivery: Delivery;
  /** What is hostile about the case, for counts and reports. */
  notes: string[];
  /** x-request-timeout-ms was sent: 504 REQUEST_DEADLINE_EXCEEDED is then a documented answer. */
  deadline: boolean;
  /** The body before framing, for reports. */
  bodyPreview: string;
}

export const UNROUTED = "(unrouted)";

export interface CaseOptions {
  /** Megabyte strings, 100k-level nesting, bodies over the size limits (the long run). */
  huge: boolean;
  /** The largest JSON body the server accepts, for bodies just over it. */
  maxBodyBytes: number;
  maxUploadBytes: number;
  /**
   * Only well-formed HTTP sent whole (no broken framing, no bytes HTTP forbids, no slow or
   * vanishing client): for a server behind a proxy that would answer those itself.
   */
  wellFormed?: boolean;
}

/** One arbitrary over every operation of the contract (equal weights) and unrouted paths. */
export function caseArbitrary(
  contract: Contract,
  fixtures: FuzzFixtures,
  options: CaseOptions,
): fc.Arbitrary<FuzzCase> {
  // One case in four is an ordinary, valid request: the answers the contract describes in full
  // (successes, streams, lists) are checked too, not only the refusals of hostile ones.
  const perOperation = contract.operations.map((op) => ({
    weight: 1,
    arbitrary: fc.oneof(
      { weight: 3, arbitrary: operationCase(contract, op, fixtures, options) },
      { weight: 1, arbitrary: plainCase(contract, op, fixtures) },
    ),
  }));
  const all = fc.oneof(...perOperation, { weight: 1, arbitrary: unroutedCase(fixtures, options) });
  // Methods too: a proxy's parser (node:http's among them) refuses one it does not know, before any handler.
  return options.wellFormed
    ? all.filter(
        (c) =>
          c.delivery.kind === "whole" &&
          httpProblems(c).length === 0 &&
          METHODS.includes(c.method) &&
          // An unknown Expect (417) and a protocol switch are a proxy's to answer too.
          !c.headers.some(([n, v]) => /^upgrade$/i.test(n) || (/^expect$/i.test(n) && v !== "100-continue")),
      )
    : all;
}

/** Per operation, for counts that list every operation even when it was not drawn. */
export function operationIds(contract: Contract): string[] {
  return [...contract.operations.map((op) => op.operationId), UNROUTED];
}

interface Parts {
  method: { value: string; note?: string };
  target: { value: string; notes: string[] };
  auth: { headers: [string, string][]; note?: string };
  params: { headers: [string, string][]; notes: string[]; deadline: boolean };
  body: BodyChoice | undefined;
  extras: { headers: [string, string][]; notes: string[] };
  framing: Framing;
  delivery: Delivery;
  host: string | undefined;
}

interface BodyChoice {
  bytes: Buffer;
  /** undefined: no Content-Type header. */
  contentType: string | undefined;
  contentEncoding?: string;
  notes: string[];
  preview: string;
}

type Framing = "length" | "chunked" | "both" | "overstated" | "understated" | "unframed";

function operationCase(
  contract: Contract,
  op: FuzzOperation,
  fixtures: FuzzFixtures,
  options: CaseOptions,
): fc.Arbitrary<FuzzCase> {
  return fc
    .record({
      method: methodArbitrary(op.method),
      target: targetArbitrary(contract, op, fixtures, options),
      auth: authArbitrary(op, fixtures),
      params: headerParamsArbitrary(contract, op, fixtures),
      body: bodyArbitrary(contract, op, fixtures, options),
      extras: extraHeadersArbitrary(options),
      framing: framingArbitrary(),
      delivery: deliveryArbitrary(),
      host: hostArbitrary(fixtures),
    })
    .map((parts) => assemble(op.operationId, parts));
}

/** A well-formed request with valid values: the fixtures' ids, the key of the account, a body valid against its schema. */
function plainCase(contract: Contract, op: FuzzOperation, fixtures: FuzzFixtures): fc.Arbitrary<FuzzCase> {
  const pathParams = op.params.filter((p) => p.in === "path");
  const values = fc.tuple(
    ...pathParams.map((p) => {
      if (p.name === "account") return fc.constant(fixtures.account);
      const known = knownValues(op, p, fixtures).filter((v) => !v.includes("/") && !v.includes("%"));
      return known.length > 0
        ? fc.constantFrom(...known)
        : schemaArbitrary(p.schema, { resolve: contract.resolve, mutationRate: 0 }).map((v) =>
            encodeURIComponent(String(v)),
          );
    }),
  );
  const json = op.bodies.get("application/json");
  const body: fc.Arbitrary<BodyChoice | undefined> = json
    ? schemaArbitrary(minimal(contract, json), {
        resolve: contract.resolve,
        mutationRate: 0,
        hints: hints(fixtures),
        alwaysInclude: ALWAYS,
      }).map((v) => jsonChoice(v, { value: "application/json" }, ["plain valid body"]))
    : op.bodies.size > 0
      ? uploadBody({ huge: false, maxBodyBytes: 0, maxUploadBytes: 1 << 20 }).filter(
          (b) => b.contentType === "application/jsonl",
        )
      : fc.constant(undefined);
  return fc.tuple(values, body).map(([vals, b]) => {
    let i = 0;
    const path = op.template.replace(/\{[^}]+\}/g, () => vals[i++] as string);
    return assemble(op.operationId, {
      method: { value: op.method },
      target: { value: `${fixtures.basePath}${path}`, notes: ["plain"] },
      auth: { headers: [["Authorization", `Bearer ${fixtures.keys[fixtures.account]}`]] },
      params: { headers: [], notes: [], deadline: false },
      body: b,
      extras: { headers: [], notes: [] },
      framing: "length",
      delivery: { kind: "whole" },
      host: fixtures.host,
    });
  });
}

/**
 * The schema with only its required properties, the short-generation ones and `stream`: what
 * a plain client sends (the optional ones, drawn at random, are mostly refused for what they
 * mean: a reasoning setting for a model that does not reason, a previous response id).
 */
function minimal(contract: Contract, schema: Schema): Schema {
  const resolved = contract.resolve(schema);
  const properties = resolved.properties as Record<string, Schema> | undefined;
  if (!properties) return resolved;
  const keep = new Set([...((resolved.required as string[]) ?? []), ...ALWAYS, "stream"]);
  return { ...resolved, properties: Object.fromEntries(Object.entries(properties).filter(([k]) => keep.has(k))) };
}

function unroutedCase(fixtures: FuzzFixtures, options: CaseOptions): fc.Arbitrary<FuzzCase> {
  const base = fixtures.basePath;
  const account = fixtures.account;
  const targets = fc.oneof(
    fc.constantFrom(
      "/",
      base,
      `${base}/`,
      "/v2/models",
      `${base}/nope`,
      `${base}/responses/resp_123`,
      `${base}/responses/`,
      `${base}/models/`,
      `/${base}/models`,
      `${base}//models`,
      `${base.toUpperCase()}/models`,
      `${base}/MODELS`,
      `${base}/accounts`,
      `${base}/accounts/${account}`,
      `${base}/accounts/${account}/datasets/`,
      `${base}/accounts/${account}/datasets:upload`,
      `${base}/accounts/${account}/datasets/${fixtures.datasets[0] ?? "x"}:frobnicate`,
      `${base}/accounts/${account}/supervisedFineTuningJobs:cancel`,
      `${base}/%2e%2e${base}/models`,
      `${base}/models/%`,
      `${base}/models?%zz=%zz`,
      "/docs",
      "/docs/",
      "/docs/openapi.yaml",
      "/docs/assets",
      "/docs/assets/",
      "/docs/assets/..%2f..%2fpackage.json",
      "/docs/assets/%2e%2e/%2e%2e/package.json",
      "/docs/assets/%00",
      "/docs/assets/swagger-ui.css",
      "*",
      `http://${fixtures.host}${base}/models`,
      `http://evil.example${base}/models`,
      `${base.slice(1)}/models`,
    ),
    fc.webPath().map((p) => p || "/"),
    fc.webPath().map((p) => `${base}${p}`),
  );
  return fc
    .record({
      method: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "TRACE", "PROPFIND"),
      target: targets,
      auth: authArbitrary(undefined, fixtures),
      body: fc.option(jsonBodyOf(fc.constant({ model: fixtures.models[0] }), "application/json", "arbitrary"), {
        freq: 3,
      }),
      extras: extraHeadersArbitrary(options),
      delivery: deliveryArbitrary(),
    })
    .map(({ method, target, auth, body, extras, delivery }) =>
      assemble(UNROUTED, {
        method: { value: method },
        target: { value: target, notes: [`target ${target.slice(0, 60)}`] },
        auth,
        params: { headers: [], notes: [], deadline: false },
        body: body ?? undefined,
        extras,
        framing: "length",
        delivery,
        host: fixtures.host,
      }),
    );
}

function assemble(operationId: string, parts: Parts): FuzzCase {
  const notes: string[] = [];
  if (parts.method.note) notes.push(parts.method.note);
  notes.push(...parts.target.notes);
  if (parts.auth.note) notes.push(parts.auth.note);
  notes.push(...parts.params.notes, ...parts.extras.notes);
  const headers: [string, string][] = [];
  if (parts.host !== undefined) headers.push(["Host", parts.host]);
  else notes.push("no Host header");
  headers.push(...parts.auth.headers, ...parts.params.headers);
  let body: Buffer = Buffer.alloc(0);
  let delivery = parts.delivery;
  let bodyPreview = "";
  if (parts.body) {
    notes.push(...parts.body.notes);
    bodyPreview = parts.body.preview;
    if (parts.body.contentType !== undefined) headers.push(["Content-Type", parts.body.contentType]);
    if (parts.body.contentEncoding !== undefined) headers.push(["Content-Encoding", parts.body.contentEncoding]);
    const raw = parts.body.bytes;
    switch (parts.framing) {
      case "length":
        headers.push(["Content-Length", String(raw.length)]);
        body = raw;
        break;
      case "chunked":
        headers.push(["Transfer-Encoding", "chunked"]);
        body = chunkEncode(raw, [0.1, 0.5, 0.9]);
        notes.push("chunked");
        break;
      case "both":
        headers.push(["Content-Length", String(raw.length)], ["Transfer-Encoding", "chunked"]);
        body = chunkEncode(raw, [0.5]);
        notes.push("Content-Length and Transfer-Encoding");
        break;
      case "overstated":
        // More declared than sent: the client then stops sending for good.
        headers.push(["Content-Length", String(raw.length + 10)]);
        body = raw;
        delivery = { kind: "halfClose", at: 1 };
        notes.push("Content-Length overstated, then FIN");
        break;
      case "understated":
        headers.push(["Content-Length", String(Math.max(0, raw.length - 3))]);
        body = raw;
        notes.push("Content-Length understated");
        break;
      case "unframed":
        body = raw;
        notes.push("body without Content-Length");
        break;
    }
  } else if (parts.framing === "chunked") {
    headers.push(["Transfer-Encoding", "chunked"]);
    body = Buffer.from("0\r\n\r\n");
  } else if (parts.framing === "length") {
    // Usually no body and no framing headers at all; Content-Length: 0 is the same message.
  }
  headers.push(...parts.extras.headers);
  if (delivery.kind !== "whole") notes.push(`delivery ${describeDelivery(delivery)}`);
  return {
    operationId,
    method: parts.method.value,
    target: parts.target.value,
    headers,
    body,
    delivery,
    notes,
    deadline: parts.params.deadline,
    bodyPreview,
    [fc.toStringMethod]() {
      return describeCase(this as FuzzCase);
    },
  } as FuzzCase;
}

export function describeDelivery(d: Delivery): string {
  switch (d.kind) {
    case "whole":
      return "whole";
    case "split":
      return `split at ${d.cuts.map((c) => c.toFixed(2)).join(",")} ${d.delayMs}ms apart`;
    case "trickle":
      return `byte by byte, ${d.delayMs}ms apart`;
    case "stall":
      return `stall ${d.pauseMs}ms at ${(d.at * 100).toFixed(0)}% of the body`;
    case "halfClose":
      return `FIN at ${(d.at * 100).toFixed(0)}% of the body`;
    case "abort":
      return `reset at ${(d.at * 100).toFixed(0)}% of the request`;
    case "abortAfter":
      return `reset ${d.delayMs}ms after sending`;
  }
}

/** A replayable, bounded description: request line, headers, body preview, delivery. */
export function describeCase(c: FuzzCase): string {
  const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…<${s.length} bytes>` : s);
  const headers = c.headers.map(([n, v]) => `${cut(n, 60)}: ${cut(JSON.stringify(v).slice(1, -1), 120)}`).join(" | ");
  return `${c.operationId}: ${c.method} ${cut(JSON.stringify(c.target).slice(1, -1), 200)} | ${headers} | body(${c.body.length} bytes) ${cut(c.bodyPreview, 600)} | delivery ${describeDelivery(c.delivery)}${c.notes.length ? ` | notes: ${c.notes.join("; ")}` : ""}`;
}

/** The bytes on the wire. */
export function toWire(c: FuzzCase): WireRequest {
  const head = `${c.method} ${c.target} HTTP/1.1\r\n${c.headers.map(([n, v]) => `${n}: ${v}\r\n`).join("")}\r\n`;
  return { head: Buffer.from(head, "latin1"), body: c.body, delivery: c.delivery, isHead: c.method === "HEAD" };
}

/** UTF-8 bytes as a latin1 string (how targets and header values are held). */
function bytes(text: string): string {
  return Buffer.from(text, "utf8").toString("latin1");
}

// ——— method, target, parameters ———

function methodArbitrary(method: string): fc.Arbitrary<Parts["method"]> {
  return fc.oneof(
    { weight: 40, arbitrary: fc.constant({ value: method }) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "TRACE")
        .map((m) => ({ value: m, note: `method ${m}` })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom("PROPFIND", "FOO", method.toLowerCase(), "M-SEARCH", "QUERY", "PURGE")
        .map((m) => ({ value: m, note: `method ${m}` })),
    },
  );
}

/** Path segments as raw request-target text (already %-encoded where meant to be). */
const HOSTILE_SEGMENTS = [
  "",
  ".",
  "..",
  "%2e%2e",
  "%",
  "%2",
  "%zz",
  "%00",
  "%2F",
  "a%2Fb",
  "%252F",
  "%c3%28",
  "%ed%a0%80",
  "%ff%fe",
  "%f4%90%80%80",
  "a%20b",
  "a+b",
  "~",
  "*",
  "@",
  ";x=1",
  ":",
  ":upload",
  "::",
  "x".repeat(64),
  "x".repeat(65),
  "x".repeat(4096),
  "%E2%80%AE",
  "%F0%9F%A6%80",
  "__proto__",
  "constructor",
  "hasOwnProperty",
  "0",
  "-1",
  "1e3",
  "99999999999999999999",
  "2147483648",
  "1.5",
];

/** Raw bytes no client should put in a request line. */
const RAW_SEGMENTS = [
  "a b",
  "a\tb",
  "a\u0000b",
  "\u0001",
  "ü",
  "データ",
  "🦀",
  'a"b',
  "a<b>",
  "a{b}",
  "a|b",
  "a\\b",
  "a^b",
  "a`b",
  "\u007f",
];

function pathValueArbitrary(
  contract: Contract,
  op: FuzzOperation,
  param: ParamSpec,
  fixtures: FuzzFixtures,
  options: CaseOptions,
): fc.Arbitrary<{ text: string; note?: string }> {
  const known = knownValues(op, param, fixtures);
  const valid = schemaArbitrary(param.schema, { resolve: contract.resolve, mutationRate: 0 }).map((v) => ({
    text: encodeURIComponent(String(v)),
  }));
  const own = fixtures.account;
  const ofAccount = [own.toUpperCase(), `${own}%00`, `${own}%2F..%2F${fixtures.otherAccount}`];
  const hostile = fc
    .constantFrom(...HOSTILE_SEGMENTS, ...ofAccount, ...(options.huge ? ["x".repeat(20_000), "%41".repeat(5000)] : []))
    .map((s) => ({ text: s, note: `${param.name}=${JSON.stringify(s.slice(0, 40))}` }));
  const raw = fc
    .oneof(fc.constantFrom(...RAW_SEGMENTS), fc.string({ minLength: 1, maxLength: 8, unit: "binary" }))
    .map((s) => ({ text: bytes(s), note: `${param.name} raw ${JSON.stringify(s)}` }));
  const encodedOdd = fc
    .string({ minLength: 1, maxLength: 12, unit: "binary" })
    .map((s) => ({ text: encodeURIComponent(s), note: `${param.name}=${JSON.stringify(s)} (encoded)` }));
  // The key's own account nearly always: any other is 403 before anything else is looked at.
  if (param.name === "account") {
    return fc.oneof(
      { weight: 17, arbitrary: fc.constant({ text: fixtures.account }) },
      {
        weight: 3,
        arbitrary: fc.oneof(
          fc.constant({ text: fixtures.otherAccount, note: "account=the other account" }),
          valid,
          hostile,
          encodedOdd,
          raw,
        ),
      },
    );
  }
  return fc.oneof(
    { weight: 12, arbitrary: known.length > 0 ? fc.constantFrom(...known).map((text) => ({ text })) : valid },
    { weight: 3, arbitrary: valid },
    { weight: 3, arbitrary: hostile },
    { weight: 2, arbitrary: encodedOdd },
    { weight: 1, arbitrary: raw },
  );
}

function knownValues(op: FuzzOperation, param: ParamSpec, fixtures: FuzzFixtures): string[] {
  switch (param.name) {
    case "dataset":
      return op.method === "DELETE" ? fixtures.scratchDatasets : [...fixtures.datasets, ...fixtures.scratchDatasets];
    case "job":
      return op.template.includes("dpoJobs")
        ? [...fixtures.dpoJobs, ...fixtures.sftJobs.slice(0, 1)]
        : [...fixtures.sftJobs, ...fixtures.dpoJobs.slice(0, 1)];
    case "version":
      return ["1", "1", "2"];
    case "model":
      return [
        ...fixtures.models,
        `accounts%2F${fixtures.account}%2Fmodels%2Fnope`,
        `accounts/${fixtures.account}/models/nope`,
      ];
    default:
      return [];
  }
}

function targetArbitrary(
  contract: Contract,
  op: FuzzOperation,
  fixtures: FuzzFixtures,
  options: CaseOptions,
): fc.Arbitrary<Parts["target"]> {
  const pathParams = op.params.filter((p) => p.in === "path");
  const queryParams = op.params.filter((p) => p.in === "query");
  const values = fc.tuple(...pathParams.map((p) => pathValueArbitrary(contract, op, p, fixtures, options)));
  const query = fc.tuple(
    ...queryParams.map((p) => fc.option(queryValueArbitrary(contract, p), { freq: 2, nil: undefined })),
  );
  const extraQuery = fc.oneof(
    { weight: 8, arbitrary: fc.constant<string[]>([]) },
    {
      weight: 1,
      arbitrary: fc.array(
        fc.constantFrom(
          "foo=bar",
          "pageSize=1&pageSize=2",
          "__proto__=x",
          "constructor[prototype][x]=1",
          "a[b]=c",
          "=",
          "&&",
          "%",
          "x=%zz",
          "pageSize",
          "filter=%00",
          "stream=true",
          "key=" + fixtures.keys[fixtures.account],
          "%FF=%FE",
        ),
        { minLength: 1, maxLength: 2 },
      ),
    },
  );
  const suffix = fc.oneof(
    { weight: 30, arbitrary: fc.constant<{ text: string; note?: string }>({ text: "" }) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom("/", "//", ":bogus", "%", "#frag", "/..", "/.", ";x")
        .map((s) => ({ text: s, note: `suffix ${s}` })),
    },
  );
  const prefix = fc.oneof(
    { weight: 40, arbitrary: fc.constant<{ text: string; note?: string }>({ text: fixtures.basePath }) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          fixtures.basePath.toUpperCase(),
          "/v2",
          "",
          `${fixtures.basePath}${fixtures.basePath}`,
          `/${fixtures.basePath}`,
          `${fixtures.basePath}/.`,
          `http://${fixtures.host}${fixtures.basePath}`,
          `${fixtures.basePath}%2F`,
        )
        .map((s) => ({ text: s, note: `prefix ${JSON.stringify(s)}` })),
    },
  );
  return fc.tuple(prefix, values, suffix, query, extraQuery).map(([pre, vals, suf, q, extra]) => {
    const notes: string[] = [];
    if (pre.note) notes.push(pre.note);
    let i = 0;
    const path = op.template.replace(/\{[^}]+\}/g, () => {
      const v = vals[i++] as { text: string; note?: string };
      if (v.note) notes.push(v.note);
      return v.text;
    });
    if (suf.note) notes.push(suf.note);
    const pairs: string[] = [];
    q.forEach((v, j) => {
      if (v === undefined) return;
      pairs.push(`${(queryParams[j] as ParamSpec).name}=${v.text}`);
      if (v.note) notes.push(v.note);
    });
    pairs.push(...extra);
    if (extra.length) notes.push(`query ${extra.join("&")}`);
    return { value: `${pre.text}${path}${suf.text}${pairs.length ? `?${pairs.join("&")}` : ""}`, notes };
  });
}

function queryValueArbitrary(contract: Contract, param: ParamSpec): fc.Arbitrary<{ text: string; note?: string }> {
  const schema = contract.resolve(param.schema);
  const valid = schemaArbitrary(schema, {
    resolve: contract.resolve,
    mutationRate: 0,
    hints: { filter: filterArbitrary() },
  }).map((v) => ({ text: encodeURIComponent(String(v)) }));
  const byName: fc.Arbitrary<string> =
    param.name === "filter" ? filterArbitrary().map(encodeURIComponent) : valid.map((v) => v.text);
  const edges: string[] = [
    "",
    "%",
    "%zz",
    "%00",
    "null",
    "undefined",
    "[]",
    "{}",
    "true",
    "-1",
    "0",
    "1.5",
    "1e2",
    "0x10",
    " 5",
    "%EF%BC%91",
    "99999999999999999999",
    "NaN",
    "Infinity",
    "-Infinity",
    "1e400",
    "9007199254740993",
  ];
  if (typeof schema.maximum === "number") edges.push(String(schema.maximum), String(schema.maximum + 1));
  if (typeof schema.minimum === "number") edges.push(String(schema.minimum), String(schema.minimum - 1));
  if (typeof schema.maxLength === "number") edges.push("a".repeat(schema.maxLength), "a".repeat(schema.maxLength + 1));
  if (Array.isArray(schema.enum))
    edges.push(...(schema.enum as string[]).map((e) => e.toLowerCase()), "DATASET_VIEW_UNSPECIFIED");
  return fc.oneof(
    { weight: 4, arbitrary: byName.map((text) => ({ text })) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(...edges)
        .map((text) => ({ text, note: `${param.name}=${JSON.stringify(text.slice(0, 40))}` })),
    },
    {
      weight: 1,
      arbitrary: fc
        .string({ maxLength: 12, unit: "binary" })
        .map((s) => ({ text: encodeURIComponent(s), note: `${param.name}=${JSON.stringify(s)}` })),
    },
  );
}

function filterArbitrary(): fc.Arbitrary<string> {
  const states = [
    "RUNNING",
    "QUEUED",
    "JOB_STATE_RUNNING",
    "SUCCEEDED",
    "READY",
    "DELETED",
    "DATASET_STATE_READY",
    "CREATING",
    "FAILED",
    "running",
    "BOGUS",
    "",
  ];
  return fc.oneof(
    fc.constantFrom(...states).map((s) => `state:${s}`),
    fc.constantFrom(
      "state",
      "state:",
      ":",
      "state:RUNNING state:QUEUED",
      "state = RUNNING",
      "name:x",
      "state:RUNNING AND x",
      "x".repeat(257),
      "state:" + "A".repeat(250),
    ),
  );
}

function headerParamsArbitrary(
  contract: Contract,
  op: FuzzOperation,
  fixtures: FuzzFixtures,
): fc.Arbitrary<Parts["params"]> {
  const params = op.params.filter((p) => p.in === "header");
  if (params.length === 0) return fc.constant({ headers: [], notes: [], deadline: false });
  return fc
    .tuple(...params.map((p) => fc.option(headerValueArbitrary(contract, p, fixtures), { freq: 2, nil: undefined })))
    .map((values) => {
      const headers: [string, string][] = [];
      const notes: string[] = [];
      let deadline = false;
      values.forEach((v, i) => {
        if (v === undefined) return;
        const name = (params[i] as ParamSpec).name;
        headers.push([name, v.text]);
        if (v.note) notes.push(v.note);
        if (name.toLowerCase() === "x-request-timeout-ms") deadline = true;
      });
      return { headers, notes, deadline };
    });
}

function headerValueArbitrary(
  contract: Contract,
  param: ParamSpec,
  fixtures: FuzzFixtures,
): fc.Arbitrary<{ text: string; note?: string }> {
  const schema = contract.resolve(param.schema);
  const name = param.name.toLowerCase();
  const valid: fc.Arbitrary<string> =
    name === "x-request-timeout-ms"
      ? fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 5_000, max: 2 ** 31 - 1 })).map(String)
      : name === "idempotency-key"
        ? fc.oneof(
            fc.constantFrom(`${fixtures.idPrefix}-key-1`, `${fixtures.idPrefix}-key-2`),
            fc.stringMatching(/^[A-Za-z0-9-]{1,32}$/).map((k) => `${fixtures.idPrefix}-${k}`),
          )
        : fc.constantFrom("2023-06-01", "2024-01-01", "bogus");
  const edges = [
    "",
    " ",
    "0",
    "-1",
    "1.5",
    "abc",
    "1e3",
    "0x10",
    "99999999999999999999",
    "2147483648",
    "\u00e9",
    "\u00ff\u00fe",
    "a".repeat(255),
    "a".repeat(256),
    "a".repeat(8000),
  ];
  if (typeof schema.maxLength === "number") edges.push("k".repeat(schema.maxLength + 1));
  return fc.oneof(
    { weight: 4, arbitrary: valid.map((text) => ({ text })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...edges).map((text) => ({
        text,
        note: `${param.name}: ${JSON.stringify(text.slice(0, 30))}${text.length > 30 ? `…(${text.length})` : ""}`,
      })),
    },
  );
}

// ——— keys and other headers ———

function authArbitrary(op: FuzzOperation | undefined, fixtures: FuzzFixtures): fc.Arbitrary<Parts["auth"]> {
  const key = fixtures.keys[fixtures.account] as string;
  const others = Object.entries(fixtures.keys).filter(([account]) => account !== fixtures.account);
  const bearer = (k: string): [string, string][] => [["Authorization", `Bearer ${k}`]];
  return fc.oneof(
    { weight: 30, arbitrary: fc.constant({ headers: bearer(key) }) },
    {
      weight: 2,
      arbitrary: fc.constant({
        headers: [["x-api-key", key]] as [string, string][],
        note: `x-api-key${op?.apiKeyHeader ? "" : " (not accepted here)"}`,
      }),
    },
    {
      weight: 3,
      arbitrary: fc.constantFrom(...others).map(([account, k]) => ({ headers: bearer(k), note: `key of ${account}` })),
    },
    {
      weight: 3,
      arbitrary: fc
        .constantFrom<[string, [string, string][]]>(
          ["no key", []],
          ["empty bearer", [["Authorization", "Bearer "]]],
          ["scheme only", [["Authorization", "Bearer"]]],
          ["lower-case scheme", [["Authorization", `bearer ${key}`]]],
          ["basic auth", [["Authorization", "Basic Zm9vOmJhcg=="]]],
          ["unknown key", [["Authorization", "Bearer sk-dev-nobody-00000000000000000000000000000000"]]],
          ["key plus a byte", [["Authorization", `Bearer ${key}x`]]],
          ["key with a tab", [["Authorization", `Bearer\t${key}`]]],
          ["two spaces", [["Authorization", `Bearer  ${key}`]]],
          ["8 KB key", [["Authorization", `Bearer ${"k".repeat(8000)}`]]],
          [
            "two Authorization headers",
            [
              ["Authorization", `Bearer ${key}`],
              ["Authorization", `Bearer ${fixtures.keys[fixtures.otherAccount]}`],
            ],
          ],
          [
            "Authorization and another account's x-api-key",
            [
              ["Authorization", `Bearer ${key}`],
              ["x-api-key", fixtures.keys[fixtures.otherAccount] as string],
            ],
          ],
          ["latin1 bytes in the key", [["Authorization", "Bearer sk-\u00e9\u00ff"]]],
          ["empty x-api-key", [["x-api-key", ""]]],
        )
        .map(([note, headers]) => ({ headers, note })),
    },
  );
}

function hostArbitrary(fixtures: FuzzFixtures): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 60, arbitrary: fc.constant(fixtures.host) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<string | undefined>(
        undefined,
        "",
        "evil.example",
        "a".repeat(300),
        "[::1",
        "127.0.0.1:99999",
      ),
    },
  );
}

/** Headers nobody asked for: odd values, overlong ones, protocol switches. */
function extraHeadersArbitrary(options: CaseOptions): fc.Arbitrary<Parts["extras"]> {
  const pool: [string, string, string][] = [
    ["x-request-id", "client-chosen-id", "client x-request-id"],
    ["X-Forwarded-For", "1.2.3.4, 5.6.7.8", "x-forwarded-for"],
    ["Accept", "text/event-stream", "accept SSE"],
    ["Accept", "application/xml", "accept XML"],
    ["Accept-Encoding", "gzip, br, zstd", "accept-encoding"],
    ["Expect", "100-continue", "expect 100-continue"],
    ["Expect", "bogus", "expect bogus"],
    ["TE", "trailers", "te trailers"],
    ["Cookie", "a=b; c=d", "cookie"],
    ["Connection", "close", "connection close"],
    ["Connection", "keep-alive, Upgrade", "connection upgrade"],
    ["Upgrade", "websocket", "upgrade websocket"],
    ["Range", "bytes=0-1", "range"],
    ["If-None-Match", "*", "if-none-match *"],
    ["If-Modified-Since", "Thu, 01 Jan 1970 00:00:00 GMT", "if-modified-since"],
    ["X-HTTP-Method-Override", "DELETE", "method override"],
    ["Content-Language", "\u00e9", "latin1 header value"],
    ["X-Fuzz", bytes("\u{1F980}\u202e"), "UTF-8 bytes in a header value"],
    ["X-Fuzz", "a\u0001b", "control byte in a header value"],
    ["X-Fuzz", "a\u007fb", "DEL in a header value"],
    ["X Fuzz", "space in the name", "space in a header name"],
    ["X-Fuzz:", "colon in the name", "colon in a header name"],
    ["X-Fuzz", "a\r\n b", "obsolete line folding"],
    ["X-Fuzz", "a\rb", "bare CR in a header value"],
    ["X-Fuzz", "a\nInjected: yes", "bare LF in a header value"],
    ["X-Big", "a".repeat(8000), "8 KB header"],
    ["X-Huge", "a".repeat(20_000), "20 KB header (over the header limit)"],
    ["x-request-timeout-ms", "abc", "x-request-timeout-ms on any operation"],
  ];
  const many = fc.constantFrom(100, 500).map((n) => ({
    headers: Array.from({ length: n }, (_, i) => [`X-Many-${i}`, "v"] as [string, string]),
    notes: [`${n} extra headers`],
  }));
  const huge = options.huge ? [["X-Enormous", "a".repeat(1_000_000), "1 MB header"] as [string, string, string]] : [];
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant<Parts["extras"]>({ headers: [], notes: [] }) },
    {
      weight: 4,
      arbitrary: fc.subarray([...pool, ...huge], { minLength: 1, maxLength: 2 }).map((chosen) => ({
        headers: chosen.map(([n, v]) => [n, v] as [string, string]),
        notes: chosen.map(([, , note]) => note),
      })),
    },
    { weight: 1, arbitrary: many },
  );
}

function framingArbitrary(): fc.Arbitrary<Framing> {
  return fc.oneof(
    { weight: 40, arbitrary: fc.constant<Framing>("length") },
    { weight: 4, arbitrary: fc.constant<Framing>("chunked") },
    { weight: 1, arbitrary: fc.constantFrom<Framing>("both", "overstated", "understated", "unframed") },
  );
}

function deliveryArbitrary(): fc.Arbitrary<Delivery> {
  const fraction = fc.double({ min: 0, max: 1, noNaN: true });
  return fc.oneof(
    { weight: 40, arbitrary: fc.constant<Delivery>({ kind: "whole" }) },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("split" as const),
        cuts: fc.array(fraction, { minLength: 1, maxLength: 4 }),
        delayMs: fc.integer({ min: 0, max: 20 }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("trickle" as const), delayMs: fc.constantFrom(0, 0, 1) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("stall" as const),
        at: fraction,
        pauseMs: fc.integer({ min: 50, max: 600 }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("halfClose" as const), at: fraction }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("abort" as const), at: fraction }) },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant("abortAfter" as const), delayMs: fc.integer({ min: 0, max: 30 }) }),
    },
  );
}

// ——— bodies ———

function bodyArbitrary(
  contract: Contract,
  op: FuzzOperation,
  fixtures: FuzzFixtures,
  options: CaseOptions,
): fc.Arbitrary<BodyChoice | undefined> {
  if (op.bodies.size === 0) {
    // GET and friends: usually no body; sometimes one anyway.
    return fc.oneof(
      { weight: 15, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: jsonBodyOf(anyJson(2), "application/json", "body on an operation without one") },
    );
  }
  const json = op.bodies.get("application/json");
  if (json) return jsonOperationBody(contract, json, fixtures, options);
  return uploadBody(options);
}

/** Valid values by property name: short generations, real models and datasets, media that needs no network. */
function hints(fixtures: FuzzFixtures): Record<string, fc.Arbitrary<unknown>> {
  // Without datasets (a profile that does not implement them) the names still have their shape.
  const datasets = fixtures.datasets.length > 0 ? fixtures.datasets : [`${fixtures.idPrefix}-none`];
  const versions =
    fixtures.versions.length > 0
      ? fixtures.versions
      : [`accounts/${fixtures.account}/datasets/${datasets[0]}/versions/1`];
  const version = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...versions) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(...datasets.map((d) => `accounts/${fixtures.account}/datasets/${d}`)),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        `accounts/${fixtures.otherAccount}/datasets/x/versions/1`,
        `accounts/${fixtures.account}/datasets/nope/versions/1`,
        `accounts/${fixtures.account}/datasets/${datasets[0]}/versions/99`,
        "x",
      ),
    },
  );
  const image = fc.constantFrom(
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
    "data:image/png;base64,!!!",
    "data:,",
    "https://example.com/cat.png",
    "http://127.0.0.1:1/x.png",
    "",
    "not a url",
  );
  const small = fc.integer({ min: 1, max: 8 });
  // Ids the fuzzer makes start with its prefix, so its cleanup finds them and leaves everyone else's alone.
  const ownId = fc.stringMatching(/^[a-z0-9-]{1,20}$/).map((id) => `${fixtures.idPrefix}-${id}`);
  return {
    datasetId: ownId,
    outputModelId: ownId,
    model: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...fixtures.models) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          "gpt-4o",
          (fixtures.models[0] ?? "m").toUpperCase(),
          `accounts/${fixtures.account}/models/nope`,
          `accounts/${fixtures.otherAccount}/models/x`,
        ),
      },
    ),
    max_output_tokens: small,
    max_tokens: small,
    max_completion_tokens: small,
    baseModel: fc.oneof(
      { weight: 6, arbitrary: fc.constant(fixtures.baseModel) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          ...fixtures.models,
          ...fixtures.models.map((m) => `accounts/maas/models/${m}`),
          "nope",
          `accounts/${fixtures.account}/models/x`,
        ),
      },
    ),
    inputDatasetVersion: version,
    evaluationDatasetVersion: version,
    image_url: image,
    url: image,
    file_url: image,
    file_data: fc.constantFrom("aGVsbG8=", "!!!", ""),
    source: fc.constantFrom(
      { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
      { type: "url", url: "https://example.com/cat.png" },
      { type: "base64", media_type: "text/plain", data: "!!" },
    ),
  };
}

/** Properties always sent in valid and mutated bodies: they keep generation short. */
const ALWAYS = ["max_output_tokens", "max_tokens", "max_completion_tokens"];

function jsonOperationBody(
  contract: Contract,
  schema: Schema,
  fixtures: FuzzFixtures,
  options: CaseOptions,
): fc.Arbitrary<BodyChoice> {
  const common = { resolve: contract.resolve, hints: hints(fixtures), alwaysInclude: ALWAYS };
  const valid = schemaArbitrary(schema, { ...common, mutationRate: 0 });
  const mutated = schemaArbitrary(schema, { ...common, mutationRate: 8, huge: options.huge });
  // Valid in every respect, but free-form objects (tool parameter schemas) are nested thousands of levels deep.
  const deep = schemaArbitrary(schema, { ...common, mutationRate: 0, deepOpenObjects: 60, huge: options.huge });
  const contentType = contentTypeArbitrary("application/json");
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.tuple(valid, contentType).chain(([v, ct]) => encodingArbitrary(jsonChoice(v, ct, ["valid body"]))),
    },
    {
      weight: 2,
      arbitrary: deep.map((v) => jsonChoice(v, { value: "application/json" }, ["valid body, deep free-form objects"])),
    },
    { weight: 5, arbitrary: fc.tuple(mutated, contentType).map(([v, ct]) => jsonChoice(v, ct, ["mutated body"])) },
    { weight: 2, arbitrary: fc.tuple(valid, structuralMutation(options)).map(([v, m]) => m(toJsonText(v))) },
  );
}

function jsonChoice(
  value: unknown,
  contentType: { value: string | undefined; note?: string },
  notes: string[],
): BodyChoice {
  const text = toJsonText(value);
  return {
    bytes: Buffer.from(text, "utf8"),
    contentType: contentType.value,
    notes: contentType.note ? [...notes, contentType.note] : notes,
    preview: describeJson(value),
  };
}

function jsonBodyOf(values: fc.Arbitrary<unknown>, contentType: string, note: string): fc.Arbitrary<BodyChoice> {
  return values.map((v) => ({
    bytes: Buffer.from(toJsonText(v), "utf8"),
    contentType,
    notes: [note],
    preview: describeJson(v),
  }));
}

function contentTypeArbitrary(declared: string): fc.Arbitrary<{ value: string | undefined; note?: string }> {
  return fc.oneof(
    { weight: 30, arbitrary: fc.constant({ value: declared }) },
    {
      weight: 3,
      arbitrary: fc
        .constantFrom(`${declared}; charset=utf-8`, `${declared.toUpperCase()}`, `${declared};charset=UTF-8`)
        .map((value) => ({ value })),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom<string | undefined>(
          undefined,
          "",
          "text/plain",
          "application/x-www-form-urlencoded",
          "multipart/form-data",
          "multipart/form-data; boundary=",
          "application/jsonl",
          "application/octet-stream",
          "application/json; charset=latin1",
          "application/json; charset=utf-16",
          "application/json; charset=bogus",
          'application/json; charset="',
          "application/json;;;",
          "application/*",
          "*/*",
          "application/json-patch+json",
          "application/vnd.api+json",
          "application/json, text/plain",
          "\u00e9/\u00e9",
        )
        .map((value) => ({ value, note: `content-type ${JSON.stringify(value)}` })),
    },
  );
}

/** Sometimes the body is compressed (properly or not) and says so. */
function encodingArbitrary(choice: BodyChoice): fc.Arbitrary<BodyChoice> {
  return fc.oneof(
    { weight: 20, arbitrary: fc.constant(choice) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom<[string, boolean]>(
          ["gzip", true],
          ["gzip", false],
          ["deflate", false],
          ["br", false],
          ["identity", false],
          ["gzip, gzip", false],
          ["x-unknown", false],
          ["GZIP", true],
        )
        .map(([encoding, compress]) => ({
          ...choice,
          bytes: compress ? gzipSync(choice.bytes) : choice.bytes,
          contentEncoding: encoding,
          notes: [...choice.notes, `content-encoding ${encoding}${compress ? "" : " (not actually encoded)"}`],
        })),
    },
  );
}

/** Mutations of the JSON text itself: what a schema-shaped value cannot express. */
function structuralMutation(options: CaseOptions): fc.Arbitrary<(text: string) => BodyChoice> {
  const json = "application/json";
  const choice =
    (note: string, make: (text: string) => Buffer | string, contentType: string | undefined = json) =>
    (text: string): BodyChoice => {
      const made = make(text);
      const bytes = typeof made === "string" ? Buffer.from(made, "utf8") : made;
      return {
        bytes,
        contentType,
        notes: [`structural: ${note}`],
        preview: bytes.length > 300 ? `${bytes.toString("latin1", 0, 300)}…` : bytes.toString("latin1"),
      };
    };
  const invalidUtf8 = [
    Buffer.from([0xff]),
    Buffer.from([0xc3, 0x28]),
    Buffer.from([0xed, 0xa0, 0x80]),
    Buffer.from([0xf4, 0x90, 0x80, 0x80]),
    Buffer.from([0xc0, 0xaf]),
    Buffer.from([0xe2, 0x82]),
  ];
  const at = (text: string, fraction: number) => Math.floor(fraction * text.length);
  const fixed = fc.constantFrom(
    choice("empty body", () => ""),
    choice("null", () => "null"),
    choice("a number", () => "1"),
    choice("a string", () => '"hello"'),
    choice("true", () => "true"),
    choice("an array", () => "[]"),
    choice("an array of the body", (t) => `[${t}]`),
    choice("BOM first", (t) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(t)])),
    choice("UTF-16LE", (t) => Buffer.from(t, "utf16le")),
    choice("a duplicated key", (t) =>
      t.startsWith("{") && t.length > 2 ? `{"model":"a-model","model":42,${t.slice(1)}` : t,
    ),
    choice("a trailing comma", (t) => t.replace(/}$/, ",}")),
    choice("comments", (t) => `/* hi */ ${t}`),
    choice("single quotes", (t) => t.replaceAll('"', "'")),
    choice("NaN literal", (t) => (t.startsWith("{") && t.length > 2 ? `{"temperature":NaN,${t.slice(1)}` : "NaN")),
    choice("two documents", (t) => `${t}${t}`),
    choice("a megabyte of whitespace", (t) => " ".repeat(1_000_000) + t),
    choice("NUL bytes around", (t) => `\u0000${t}\u0000`),
    choice("escaped lone surrogates", (t) =>
      t.startsWith("{") && t.length > 2 ? `{"input":"\\ud800\\udc00\\udfff\\ud800","model":"\\u0000",${t.slice(1)}` : t,
    ),
    choice("10000 nested arrays", () => nestedJson(10_000, "array").text),
    choice("10000 nested objects", () => nestedJson(10_000, "object").text),
    choice("10000 nested arrays inside the body", (t) =>
      t.startsWith("{") && t.length > 2 ? `{"zz":${nestedJson(10_000, "array").text},${t.slice(1)}` : t,
    ),
    choice("an unterminated string", (t) => `${t.slice(0, -1)},"x":"abc`),
    choice("JSON with a text/plain type", (t) => t, "text/plain"),
    choice("a body just over the limit", () => `{"x":"${"a".repeat(options.maxBodyBytes)}"}`),
    choice("many keys", () => `{${Array.from({ length: 50_000 }, (_, i) => `"k${i}":${i}`).join(",")}}`),
  );
  return fc.oneof(
    { weight: 6, arbitrary: fixed },
    {
      weight: 2,
      arbitrary: fc
        .double({ min: 0, max: 1, noNaN: true })
        .map((f) => choice(`cut at ${(f * 100).toFixed(0)}%`, (t) => t.slice(0, at(t, f)))),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(...invalidUtf8)).map(([f, bad]) =>
        choice(`invalid UTF-8 ${bad.toString("hex")} at ${(f * 100).toFixed(0)}%`, (t) => {
          const b = Buffer.from(t, "utf8");
          const i = Math.floor(f * b.length);
          return Buffer.concat([b.subarray(0, i), bad, b.subarray(i)]);
        }),
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .uint8Array({ minLength: 1, maxLength: 64 })
        .map((random) => choice(`random bytes`, () => Buffer.from(random))),
    },
    ...(options.huge
      ? [{ weight: 1, arbitrary: fc.constant(choice("100000 nested arrays", () => nestedJson(100_000, "array").text)) }]
      : []),
  );
}

// ——— dataset uploads ———

function uploadBody(options: CaseOptions): fc.Arbitrary<BodyChoice> {
  const text = fc
    .array(fc.constantFrom("hello", "the sea", "tell me", "about", "ships", "Ahoy!"), { minLength: 1, maxLength: 4 })
    .map((w) => w.join(" "));
  const sft = fc.tuple(text, text).map(([q, a]) =>
    JSON.stringify({
      messages: [
        { role: "user", content: q },
        { role: "assistant", content: a },
      ],
    }),
  );
  const dpo = fc.tuple(text, text, text).map(([q, good, bad]) =>
    JSON.stringify({
      input: { messages: [{ role: "user", content: q }] },
      preferred_output: [{ role: "assistant", content: good }],
      non_preferred_output: [{ role: "assistant", content: bad }],
    }),
  );
  const badLine = fc.oneof(
    fc.constantFrom(
      "",
      " ",
      "{",
      "null",
      "[]",
      '{"messages":[]}',
      '{"messages":[{"role":"robot","content":"x"}]}',
      '{"messages":"x"}',
      "\ufeff{}",
      nestedJson(10_000, "array").text,
      "x".repeat(70_000),
      '{"messages":[{"role":"user","content":"\\ud800"}]}',
    ),
    anyJson(3).map((v) => toJsonText(v)),
    fc.string({ maxLength: 40, unit: "binary" }),
  );
  // A valid row of a megabyte (about 200k tokens), for the huge runs: validation counts it, estimates skip it.
  const megabyteRow = JSON.stringify({
    messages: [
      { role: "user", content: "word ".repeat(200_000) },
      { role: "assistant", content: "Ahoy." },
    ],
  });
  const line = fc.oneof(
    { weight: 8, arbitrary: sft },
    { weight: 3, arbitrary: dpo },
    { weight: 2, arbitrary: badLine },
    ...(options.huge ? [{ weight: 1, arbitrary: fc.constant(megabyteRow) }] : []),
  );
  const jsonl = fc
    .tuple(
      fc.array(line, { maxLength: 12 }),
      fc.constantFrom("\n", "\n", "\r\n", "\r"),
      fc.boolean(),
      fc.option(fc.constantFrom(...[Buffer.from([0xff, 0xfe]), Buffer.from([0xc3, 0x28])]), { freq: 5 }),
    )
    .map(([lines, eol, finalEol, bad]) => {
      const b = Buffer.from(lines.join(eol) + (finalEol ? eol : ""), "utf8");
      return bad ? Buffer.concat([b.subarray(0, b.length >> 1), bad, b.subarray(b.length >> 1)]) : b;
    });
  const overLimit = fc.constant(Buffer.alloc(options.maxUploadBytes + 1, "x"));
  const content = fc.oneof({ weight: 20, arbitrary: jsonl }, { weight: 1, arbitrary: overLimit });
  const preview = (b: Buffer) => (b.length > 300 ? `${b.toString("latin1", 0, 300)}…` : b.toString("latin1"));
  const raw = fc
    .tuple(
      content,
      contentTypeArbitrary("application/jsonl"),
      fc.constantFrom("application/jsonl", "application/octet-stream"),
    )
    .map(([bytes, ct, declared]) => ({
      bytes,
      contentType: ct.value === "application/jsonl" ? declared : ct.value,
      notes: ct.note ? [ct.note] : [],
      preview: preview(bytes),
    }));
  const multipart = fc.tuple(content, multipartShape()).map(([bytes, shape]) => {
    const body = shape.build(bytes);
    return {
      bytes: body,
      contentType: shape.contentType,
      notes: shape.note ? [shape.note] : [],
      preview: preview(body),
    };
  });
  return fc.oneof({ weight: 3, arbitrary: raw }, { weight: 2, arbitrary: multipart });
}

interface MultipartShape {
  contentType: string;
  note?: string;
  build(file: Buffer): Buffer;
}

function multipartShape(): fc.Arbitrary<MultipartShape> {
  const boundary = "----fz7MA4YWxkTrZu0gW";
  const part = (headers: string, content: Buffer | string) =>
    Buffer.concat([Buffer.from(`--${boundary}\r\n${headers}\r\n\r\n`), Buffer.from(content), Buffer.from("\r\n")]);
  const fileHeaders =
    'Content-Disposition: form-data; name="file"; filename="data.jsonl"\r\nContent-Type: application/jsonl';
  const end = Buffer.from(`--${boundary}--\r\n`);
  const ct = `multipart/form-data; boundary=${boundary}`;
  const shapes: MultipartShape[] = [
    { contentType: ct, build: (f) => Buffer.concat([part(fileHeaders, f), end]) },
    {
      contentType: ct,
      build: (f) =>
        Buffer.concat([part('Content-Disposition: form-data; name="note"', "hi"), part(fileHeaders, f), end]),
    },
    {
      contentType: ct,
      note: "multipart: no file part",
      build: (f) => Buffer.concat([part('Content-Disposition: form-data; name="other"; filename="x"', f), end]),
    },
    {
      contentType: ct,
      note: "multipart: two file parts",
      build: (f) => Buffer.concat([part(fileHeaders, f), part(fileHeaders, f), end]),
    },
    { contentType: ct, note: "multipart: no closing delimiter", build: (f) => part(fileHeaders, f) },
    {
      contentType: ct,
      note: "multipart: cut inside the headers",
      build: () => Buffer.from(`--${boundary}\r\nContent-Dispo`),
    },
    {
      contentType: "multipart/form-data",
      note: "multipart: no boundary parameter",
      build: (f) => Buffer.concat([part(fileHeaders, f), end]),
    },
    {
      contentType: "multipart/form-data; boundary=other",
      note: "multipart: wrong boundary",
      build: (f) => Buffer.concat([part(fileHeaders, f), end]),
    },
    {
      contentType: ct,
      note: "multipart: part without Content-Disposition",
      build: (f) => Buffer.concat([part("Content-Type: application/jsonl", f), end]),
    },
    {
      contentType: ct,
      note: "multipart: path in the file name",
      build: (f) =>
        Buffer.concat([part('Content-Disposition: form-data; name="file"; filename="../../../etc/passwd"', f), end]),
    },
    {
      contentType: ct,
      note: "multipart: 1000 fields first",
      build: (f) =>
        Buffer.concat([
          ...Array.from({ length: 1000 }, (_, i) => part(`Content-Disposition: form-data; name="f${i}"`, "v")),
          part(fileHeaders, f),
          end,
        ]),
    },
    {
      contentType: ct,
      note: "multipart: 20 KB part header",
      build: (f) => Buffer.concat([part(`${fileHeaders}\r\nX-Pad: ${"p".repeat(20_000)}`, f), end]),
    },
    {
      contentType: `multipart/form-data; boundary=${"b".repeat(200)}`,
      note: "multipart: 200-character boundary",
      build: (f) =>
        Buffer.concat([
          Buffer.from(`--${"b".repeat(200)}\r\n${fileHeaders}\r\n\r\n`),
          f,
          Buffer.from(`\r\n--${"b".repeat(200)}--\r\n`),
        ]),
    },
    { contentType: ct, note: "multipart: empty", build: () => Buffer.alloc(0) },
  ];
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(shapes[0] as MultipartShape) },
    { weight: 1, arbitrary: fc.constantFrom(...shapes) },
  );
}
