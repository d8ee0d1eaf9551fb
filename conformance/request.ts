/**
 * A step's request as it is sent: the templated spec filled in, its URL under `{base_url}`
 * or `{origin}`, query, headers, the key of the account role it names, and its body.
 */
import { buildBody, type PreparedRequest } from "./http.ts";
import type { Profile } from "./profile.ts";
import type { Step } from "./transcript.ts";

/** A request the transcript gets wrong (no such account role, a bad declaredLength): the message says what. */
export class RequestSpecError extends Error {
  override name = "RequestSpecError";
}

export interface RequestTarget {
  baseUrl: string;
  origin: string;
}

/** Builds the request of a step whose templates are already filled in (`spec`). */
export function prepareRequest(
  spec: Step["request"],
  target: RequestTarget,
  profile: Profile,
  fixturesDir: string,
  queryOverride?: Record<string, string>,
): PreparedRequest {
  const base = spec.base === "origin" ? target.origin : target.baseUrl;
  let rel = spec.path;
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...spec.query, ...queryOverride })) {
    if (v === undefined || v === null) continue;
    for (const item of Array.isArray(v) ? v : [v])
      query.append(k, typeof item === "string" ? item : JSON.stringify(item));
  }
  const qs = query.toString().replace(/%3A/gi, ":");
  if (qs) rel += (rel.includes("?") ? "&" : "?") + qs;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(spec.headers ?? {}))
    if (v !== undefined && v !== null) headers[k.toLowerCase()] = String(v);
  authorize(spec.auth, headers, profile);
  const body = buildBody(spec, fixturesDir);
  const declaredLength = spec.declaredLength === undefined ? undefined : Number(spec.declaredLength);
  if (declaredLength !== undefined && !(Number.isSafeInteger(declaredLength) && declaredLength > 0))
    throw new RequestSpecError(
      `declaredLength must be a whole number of bytes above 0, not ${String(spec.declaredLength)}`,
    );
  if (body.contentType && headers["content-type"] === undefined) headers["content-type"] = body.contentType;
  const apiPath = spec.base === "origin" ? (rel.startsWith("/v1/") ? rel.slice(3) : rel) : rel;
  return {
    method: spec.method.toUpperCase(),
    url: base + rel,
    relativePath: rel,
    apiPath,
    headers,
    ...(body.body !== undefined ? { body: body.body } : {}),
    ...(spec.json !== undefined ? { json: spec.json } : {}),
    ...(body.kind ? { bodyKind: body.kind } : {}),
    ...(body.label ? { bodyLabel: body.label } : {}),
    ...(declaredLength !== undefined
      ? { declaredLength, bodyKind: "declared" as const, bodyLabel: `${declaredLength} bytes, none sent` }
      : {}),
  };
}

/** The key of the step's account role (or a literal key, or a header of its own), in the scheme it names. */
function authorize(auth: Step["request"]["auth"], headers: Record<string, string>, profile: Profile): void {
  const spec = typeof auth === "string" ? { role: auth } : (auth ?? {});
  if (spec.role === "none" || spec.scheme === "none") return;
  if (spec.header) {
    headers[spec.header.toLowerCase()] = spec.value ?? "";
    return;
  }
  let key = spec.key;
  if (key === undefined) {
    const role = spec.role ?? "primary";
    const account = profile.accounts[role];
    if (!account) throw new RequestSpecError(`the profile has no account role ${role} (declare it in requires)`);
    key = account.key;
  }
  if (spec.scheme === "x-api-key") headers["x-api-key"] = key;
  else headers.authorization = `Bearer ${key}`;
}
