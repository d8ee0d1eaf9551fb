/**
 * `conformance init`: writes a starter profile for an implementation. It asks the base
 * URL (and, optionally, the primary account and a key to probe with), asks the service
 * `GET /models` for a chat model, and probes which capabilities answer at all, each with
 * a request the service must refuse without doing work (an empty JSON body, or a list):
 * 404, 405 or 501 there means "not implemented"; any other answer means it is there to be
 * tested. Keys are never written to the file: they are referred to as `env:NAME`.
 *
 * Every capability that answers is enabled. When fine-tuning answers, each model of
 * `GET /models` is offered to a cost estimate over a dataset that does not exist: a model
 * the service refuses by its `baseModel` is not trainable, one refused only for the
 * dataset is (`models.trainableBase`; asked when none is found). The second account, which
 * the isolation transcripts need, comes from `--secondary-account`,
 * `CONFORMANCE_SECONDARY_ACCOUNT`, or is asked.
 */
import { existsSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline/promises";
import { jsonOrUndefined } from "./http.ts";
import { PROFILE_KEYS } from "./profile.ts";

export interface InitOptions {
  baseUrl?: string;
  account?: string;
  /** A key to probe with (not written to the profile). */
  key?: string;
  /** The second ordinary account's id (default: CONFORMANCE_SECONDARY_ACCOUNT, else asked). */
  secondaryAccount?: string;
  /** A base model the service trains (default: found by probing, else asked). */
  trainableBase?: string;
  out: string;
  force?: boolean;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  timeoutMs?: number;
}

export interface InitResult {
  file: string;
  profile: Record<string, unknown>;
  /** What was found, one line each, for the person running it. */
  notes: string[];
}

interface Probe {
  capability: string;
  method: string;
  /** Relative to `{base_url}`; `{account}` is the primary account. */
  path: string;
  body?: unknown;
  needsAccount?: boolean;
}

/** One cheap request per capability: refused by a service that has it, unknown to one that does not. */
const PROBES: Probe[] = [
  { capability: "models", method: "GET", path: "/models" },
  { capability: "responses", method: "POST", path: "/responses", body: {} },
  { capability: "chat.completions", method: "POST", path: "/chat/completions", body: {} },
  { capability: "completions", method: "POST", path: "/completions", body: {} },
  { capability: "messages", method: "POST", path: "/messages", body: {} },
  { capability: "datasets", method: "GET", path: "/accounts/{account}/datasets", needsAccount: true },
  {
    capability: "fineTuning.sft",
    method: "GET",
    path: "/accounts/{account}/supervisedFineTuningJobs",
    needsAccount: true,
  },
  { capability: "fineTuning.dpo", method: "GET", path: "/accounts/{account}/dpoJobs", needsAccount: true },
];

export async function initProfile(options: InitOptions): Promise<InitResult> {
  const ask = asker(options);
  try {
    const baseUrl = (
      options.baseUrl ??
      (await ask.question("Base URL of the implementation, including /v1 (e.g. https://api.example.com/v1): "))
    )
      .trim()
      .replace(/\/+$/, "");
    if (!/^https?:\/\/\S+$/.test(baseUrl))
      throw new InitError(`the base URL must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
    const account = (
      options.account ??
      (await ask.question("Primary account id, as in /accounts/{account}/… (empty if it has no accounts API): "))
    ).trim();
    const key = (
      options.key ??
      process.env.CONFORMANCE_PRIMARY_KEY ??
      (await ask.question("An API key to probe with (not written to the file; empty for none): "))
    ).trim();
    if (existsSync(options.out) && !options.force)
      throw new InitError(`${options.out} exists; pass --force to overwrite it or --out <file> for another`);

    const notes: string[] = [];
    const headers: Record<string, string> = {
      "content-type": "application/json",
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    };
    const implemented: string[] = [];
    let chat: string | undefined;
    const otherModels: string[] = [];
    for (const probe of PROBES) {
      if (probe.needsAccount && !account) {
        notes.push(`${probe.capability}: not probed (no account id); add it to implements if the service has it`);
        continue;
      }
      const url = `${baseUrl}${probe.path.replace("{account}", encodeURIComponent(account))}`;
      const answer = await request(url, probe, headers, options.timeoutMs ?? 10_000);
      if (answer.status === undefined) {
        notes.push(`${probe.capability}: ${probe.method} ${url} got no answer (${answer.error}); not listed`);
        continue;
      }
      if ([404, 405, 501].includes(answer.status)) {
        notes.push(`${probe.capability}: ${probe.method} ${url} → ${answer.status}, not implemented`);
        continue;
      }
      implemented.push(probe.capability);
      notes.push(`${probe.capability}: ${probe.method} ${url} → ${answer.status}, implemented`);
      if (probe.capability === "models" && answer.status === 200) {
        const ids = modelIds(answer.json);
        chat = ids.platform[0] ?? ids.all[0];
        otherModels.push(...ids.all.filter((id) => id !== chat));
        notes.push(
          chat
            ? `models.chat: ${chat} (the first of ${ids.all.length} listed)`
            : "models.chat: GET /models listed none; fill it in",
        );
      }
    }
    const tuning = implemented.some((c) => c.startsWith("fineTuning"))
      ? await trainableModels(baseUrl, account, [chat, ...otherModels], headers, options, ask, notes)
      : {};
    const secondary =
      options.secondaryAccount ??
      process.env.CONFORMANCE_SECONDARY_ACCOUNT ??
      (account
        ? await ask.question(
            "A second ordinary account id, with its key in CONFORMANCE_SECONDARY_KEY (isolation checks; empty to fill in later): ",
          )
        : "");
    if (implemented.length === 0)
      throw new InitError(
        `nothing at ${baseUrl} answered like an implementation of the interface (see above); check the base URL`,
      );

    const profile: Record<string, unknown> = {
      $comment: `Written by \`conformance init\`. Fill in what is left (${secondary.trim() ? "" : "the secondary account, "}the other model roles, the optional accounts), export the keys, and run: conformance run --profile <this file>. The kit's profiles/template.json documents every key.`,
      name: new URL(baseUrl).hostname,
      baseUrl,
      implements: implemented,
      accounts: {
        primary: { id: account || "my-account", key: "env:CONFORMANCE_PRIMARY_KEY" },
        secondary: {
          id: secondary.trim() || "my-other-account",
          key: "env:CONFORMANCE_SECONDARY_KEY",
          $comment: "a second ordinary account: proves a key reaches its own account only",
        },
      },
      models: {
        chat: chat ?? "my-chat-model",
        ...tuning,
        ...(otherModels.length
          ? {
              $comment: `other models listed: ${otherModels.slice(0, 20).join(", ")}; roles: ${PROFILE_KEYS.models.join(", ")}`,
            }
          : {}),
      },
      timeouts: { requestMs: 30000, pollMs: 30000, jobMs: 600000, pollIntervalMs: 1000, rateLimitWaitMs: 120000 },
      concurrency: 4,
    };
    writeFileSync(options.out, `${JSON.stringify(profile, null, 2)}\n`);
    return { file: options.out, profile, notes };
  } finally {
    ask.close();
  }
}

/** Platform models (not an account's own) a cost estimate over no dataset tells apart: refused for `baseModel` or not. */
async function trainableModels(
  baseUrl: string,
  account: string,
  models: (string | undefined)[],
  headers: Record<string, string>,
  options: InitOptions,
  ask: { question: (q: string) => Promise<string> },
  notes: string[],
): Promise<{ trainableBase?: string; notTrainable?: string }> {
  const found: { trainableBase?: string; notTrainable?: string } = {};
  if (options.trainableBase) found.trainableBase = options.trainableBase;
  const candidates = models.filter((m): m is string => m !== undefined && !m.startsWith("accounts/"));
  const url = `${baseUrl}/accounts/${encodeURIComponent(account)}/supervisedFineTuningJobs:estimateCost`;
  for (const model of account ? candidates.slice(0, 10) : []) {
    const body = {
      baseModel: `accounts/maas/models/${model}`,
      inputDatasetVersion: `accounts/${account}/datasets/conformance-init-probe-none`,
      config: { outputModelId: "conformance-init-probe" },
    };
    const answer = await request(
      url,
      { capability: "", method: "POST", path: "", body },
      headers,
      options.timeoutMs ?? 10_000,
    );
    const error = (answer.json as { error?: { param?: unknown; code?: unknown } } | undefined)?.error;
    if (answer.status === undefined || (answer.status === 404 && (error?.param ?? null) === null)) continue;
    const refusedModel = error?.param === "baseModel" || error?.code === "MODEL_NOT_FOUND";
    if (refusedModel) found.notTrainable ??= model;
    else found.trainableBase ??= model;
  }
  if (!found.trainableBase) {
    const answer = (
      await ask.question(
        "A base model the service fine-tunes (models.trainableBase; empty to leave the fine-tuning transcripts skipped): ",
      )
    ).trim();
    if (answer) found.trainableBase = answer;
  }
  notes.push(
    found.trainableBase
      ? `models.trainableBase: ${found.trainableBase}${found.notTrainable ? `; models.notTrainable: ${found.notTrainable}` : ""}`
      : "models.trainableBase: none found; the fine-tuning transcripts that train will be skipped until you fill it in",
  );
  return found;
}

export class InitError extends Error {
  override name = "InitError";
}

function asker(options: InitOptions): { question: (q: string) => Promise<string>; close: () => void } {
  let rl: ReturnType<typeof createInterface> | undefined;
  let lines: AsyncIterator<string> | undefined;
  return {
    question: async (q) => {
      rl ??= createInterface({ input: options.input ?? process.stdin, terminal: false });
      lines ??= rl[Symbol.asyncIterator]();
      (options.output ?? process.stdout).write(q);
      const next = await lines.next();
      return next.done ? "" : String(next.value);
    },
    close: () => rl?.close(),
  };
}

async function request(
  url: string,
  probe: Probe,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<{ status?: number; json?: unknown; error?: string }> {
  try {
    const res = await fetch(url, {
      method: probe.method,
      headers,
      signal: AbortSignal.timeout(timeoutMs),
      ...(probe.body !== undefined ? { body: JSON.stringify(probe.body) } : {}),
    });
    return { status: res.status, json: jsonOrUndefined(await res.text()) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function modelIds(body: unknown): { all: string[]; platform: string[] } {
  const data = (body as { data?: unknown } | undefined)?.data;
  if (!Array.isArray(data)) return { all: [], platform: [] };
  const models = data.filter((m): m is { id: string; owned_by?: unknown } => typeof m?.id === "string");
  return { all: models.map((m) => m.id), platform: models.filter((m) => m.owned_by === "maas").map((m) => m.id) };
}
