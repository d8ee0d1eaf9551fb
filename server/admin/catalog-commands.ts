/**
 * `catalog list` and `catalog check`: the model catalogue file as the server will read it
 * (the CATALOG_FILE setting, default server/catalog.json), with the routing file
 * (ROUTING_FILE, default server/routing.json). They read files only, no store: an operator checks a new file
 * before restarting the servers with it.
 */
import type { PlatformModel } from "../inference/catalog.ts";
import { loadCatalogFile, trainersWithoutKey } from "../inference/catalog-file.ts";
import { checkRoutedModels, loadRoutingConfig, unroutedModels, type RoutingConfig } from "../inference/routing.ts";
import type { AllSettings } from "../settings/parse.ts";

/** The files the commands read when none is named. */
export type CatalogSettings = Pick<AllSettings, "CATALOG_FILE" | "ROUTING_FILE">;

export interface CatalogCommand {
  usage: string;
  /** The text to print, or throws: a CatalogProblem (exit 1) or any other error, a usage mistake (exit 2). */
  run(positionals: string[], settings: CatalogSettings): string;
}

/** The files are not fit to start a server with. */
export class CatalogProblem extends Error {
  override name = "CatalogProblem";
}

export const CATALOG_COMMANDS: Record<string, CatalogCommand> = {
  "catalog list": {
    usage: "catalog list [catalogue-file]          # CATALOG_FILE, else server/catalog.json",
    run(positionals, settings) {
      const models = load(catalogFile(positionals, settings));
      return models.map(describeModel).join("\n");
    },
  },
  "catalog check": {
    usage: "catalog check [catalogue-file]         # with ROUTING_FILE, else server/routing.json",
    run(positionals, settings) {
      const file = catalogFile(positionals, settings);
      const models = load(file);
      const routingFile = settings.ROUTING_FILE;
      let routing: RoutingConfig;
      try {
        routing = loadRoutingConfig(routingFile);
        checkRoutedModels(
          routing,
          models.map((m) => m.id),
          `routing file ${routingFile}`,
        );
      } catch (error) {
        throw new CatalogProblem((error as Error).message);
      }
      const trainable = models.filter((m) => m.training !== undefined).length;
      const warnings = [
        ...unrouted(models, routing, routingFile),
        ...missingKeys(models),
        ...unagreedEgress(models),
      ].map((w) => `warning: ${w}`);
      return [
        `OK: ${file} declares ${models.length} models (${trainable} trainable); ${routingFile} routes only declared models.`,
        ...warnings,
      ].join("\n");
    },
  },
};

function catalogFile(positionals: string[], settings: CatalogSettings): string {
  if (positionals.length > 1) throw new Error(`Expected at most one file, got ${positionals.length}.`);
  return positionals[0] ?? settings.CATALOG_FILE;
}

function load(file: string): PlatformModel[] {
  try {
    return loadCatalogFile(file);
  } catch (error) {
    throw new CatalogProblem((error as Error).message);
  }
}

function describeModel(m: PlatformModel): string {
  const can = [m.reasoning && "reasoning", m.tools && "tools", m.media && "media"].filter(Boolean).join(",") || "text";
  const agreement = m.requiredAgreementVersion === "" ? "" : `  agreement=${m.requiredAgreementVersion}`;
  const training = m.training
    ? `  trainable: trainer=${m.training.trainer}${m.training.thirdParty ? " (third-party)" : ""} rate=${m.training.ratePerMillion}/M`
    : "";
  return `${m.id}  window=${m.contextWindow}  maxOutput=${m.defaultMaxOutputTokens}  ${can}  price=${m.pricePerMillionTokens}/M${agreement}${training}`;
}

/** Declared models with no route: the embedded model serves them. */
function unrouted(models: PlatformModel[], routing: RoutingConfig, routingFile: string): string[] {
  return unroutedModels(
    routing,
    models.map((m) => m.id),
  ).map(
    (id) => `${id}: the routing file ${routingFile} does not route it, so the embedded model serves it under this id`,
  );
}

/** Upstream trainers whose key variable is not set in this environment: jobs on them would fail to authenticate. */
function missingKeys(models: PlatformModel[]): string[] {
  return trainersWithoutKey(models).map(
    ({ model, keyEnv }) => `${model}: the trainer's key variable ${keyEnv} is not set here`,
  );
}

/** Third-party trainers that need no agreement: an account's datasets leave this machine without its acceptance. */
function unagreedEgress(models: PlatformModel[]): string[] {
  return models.flatMap((m) =>
    m.training?.thirdParty && m.training.requiredAgreementVersion === ""
      ? [
          `${m.id}: its trainer is third-party and training.requiredAgreementVersion is empty, so datasets leave this machine without an agreement`,
        ]
      : [],
  );
}
