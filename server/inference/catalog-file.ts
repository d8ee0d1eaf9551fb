/**
 * The catalogue file (server/catalog.json, or CATALOG_FILE, JSON or YAML): read, checked against
 * server/catalog.schema.json with ajv, and turned into the PlatformModel list the server
 * works from. A bad file stops the start with a message that names the entry and the
 * field, so a typo never reaches a request.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ErrorObject } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { credential } from "../settings/environment.ts";
import { defaultOf } from "../settings/parse.ts";
import type { PlatformModel, UpstreamTrainerSettings } from "./catalog.ts";
import { readConfigDocument } from "./config-file.ts";

export const DEFAULT_CATALOG_FILE = defaultOf("CATALOG_FILE");
const SCHEMA_FILE = fileURLToPath(new URL("../catalog.schema.json", import.meta.url));

/** The trainer every embedded base model declares: LoRA on this machine's own model. */
export const LOCAL_TRAINER_TYPE = "local-lora";
export const OPENAI_FINE_TUNING_TRAINER = "openai-fine-tuning";

/** One entry of the file, as the schema describes it. */
interface CatalogEntry extends Omit<PlatformModel, "training"> {
  training?: {
    ratePerMillion: string;
    requiredAgreementVersion: string;
    trainer: { type: "local-lora" } | ({ type: "openai-fine-tuning" } & UpstreamTrainerSettings);
    defaults: Omit<
      NonNullable<PlatformModel["training"]>,
      "ratePerMillion" | "requiredAgreementVersion" | "trainer" | "thirdParty" | "upstream"
    >;
  };
}

let compiled: ReturnType<InstanceType<typeof Ajv2020>["compile"]> | undefined;

function validator() {
  compiled ??= new Ajv2020({ allErrors: false, strict: true }).compile(
    JSON.parse(readFileSync(SCHEMA_FILE, "utf8")) as object,
  );
  return compiled;
}

/** The catalogue file: JSON, or YAML when named `.yaml` or `.yml` (the same document either way). */
export function loadCatalogFile(file: string = DEFAULT_CATALOG_FILE): PlatformModel[] {
  const source = `catalogue file ${file}`;
  return parseCatalog(readConfigDocument(file, source, { yamlByName: true }), source);
}

/** Checks the catalogue's shape and its rules across fields; throws naming the entry and the field. */
export function parseCatalog(raw: unknown, source = "catalogue"): PlatformModel[] {
  const validate = validator();
  if (!validate(raw)) throw new Error(`${source}: ${describeProblem(raw, validate.errors ?? [])}`);
  const entries = (raw as { models: CatalogEntry[] }).models;
  const seen = new Set<string>();
  for (const [index, entry] of entries.entries()) {
    const where = entryName(entry, index);
    if (seen.has(entry.id)) throw new Error(`${source}: ${where}: id is declared twice`);
    seen.add(entry.id);
    if (entry.defaultMaxOutputTokens > entry.contextWindow)
      throw new Error(
        `${source}: ${where}: defaultMaxOutputTokens (${entry.defaultMaxOutputTokens}) is larger than contextWindow (${entry.contextWindow})`,
      );
    const maxContext = entry.training?.defaults.maxContextLength;
    if (maxContext !== undefined && maxContext > entry.contextWindow)
      throw new Error(
        `${source}: ${where}: training.defaults.maxContextLength (${maxContext}) is larger than contextWindow (${entry.contextWindow})`,
      );
  }
  return entries.map(platformModelOf);
}

function platformModelOf(entry: CatalogEntry): PlatformModel {
  const { training, ...model } = entry;
  if (training === undefined) return model;
  const { type, ...settings } = training.trainer;
  return {
    ...model,
    training: {
      ...training.defaults,
      ratePerMillion: training.ratePerMillion,
      trainer: type,
      // A trainer that is not this machine's sends the dataset to another party.
      thirdParty: type !== LOCAL_TRAINER_TYPE,
      requiredAgreementVersion: training.requiredAgreementVersion,
      ...(type === OPENAI_FINE_TUNING_TRAINER ? { upstream: settings as UpstreamTrainerSettings } : {}),
    },
  };
}

/** `model "big-chat" (models[3])`, or `models[3]` when the entry has no usable id. */
function entryName(entry: unknown, index: number): string {
  const id = (entry as { id?: unknown } | undefined)?.id;
  return typeof id === "string" ? `model ${JSON.stringify(id)} (models[${index}])` : `models[${index}]`;
}

/** The first problem ajv found, said with the entry's id and the field's path inside it. */
function describeProblem(raw: unknown, errors: ErrorObject[]): string {
  // With if/then, ajv also reports "must match then schema" after the real problem.
  const error = errors.find((e) => e.keyword !== "if") ?? errors[0];
  if (error === undefined) return "invalid";
  const path = error.instancePath.split("/").slice(1);
  let field = path;
  let where = "the file";
  if (path[0] === "models" && path[1] !== undefined) {
    const index = Number(path[1]);
    where = entryName((raw as { models: unknown[] }).models[index], index);
    field = path.slice(2);
  }
  const params = error.params as { missingProperty?: string; additionalProperty?: string; allowedValues?: unknown[] };
  if (params.missingProperty !== undefined)
    return `${where}: ${[...field, params.missingProperty].join(".")} is missing`;
  if (params.additionalProperty !== undefined)
    return `${where}: ${[...field, params.additionalProperty].join(".")} is not a field of the catalogue`;
  const name = field.length > 0 ? field.join(".") : "the entry";
  const allowed = params.allowedValues === undefined ? "" : ` (${params.allowedValues.join(", ")})`;
  return `${where}: ${name} ${error.message ?? "is invalid"}${allowed}`;
}

/** Upstream trainers whose key variable is not set in this environment: jobs on them would fail to authenticate. */
export function trainersWithoutKey(models: PlatformModel[]): { model: string; keyEnv: string }[] {
  return models.flatMap((m) => {
    const keyEnv = m.training?.upstream?.apiKeyEnv;
    return keyEnv !== undefined && !credential(keyEnv) ? [{ model: m.id, keyEnv }] : [];
  });
}
