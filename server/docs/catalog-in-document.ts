/**
 * The docs page follows the catalogue file: the generated document is written once for
 * the embedded models, so the page adds this server's models (from the catalogue it
 * runs with) to the document's introduction, and where the catalogue does not declare a
 * model the examples name (`tiny-chat`, `tiny-reasoner`), the examples name one it does,
 * so "Try it out" calls a model that exists. Text splices on the YAML's source, like the
 * origin's default: the rest of the document is served as generated.
 */
import { isScalar, parseDocument } from "yaml";
import type { PlatformModel } from "../inference/catalog.ts";

/** The models the generated examples name, and what stands in for each when the catalogue lacks it. */
const EXAMPLE_CHAT = "tiny-chat";
const EXAMPLE_REASONER = "tiny-reasoner";
const PLATFORM_PREFIX = "accounts/maas/models/";
/** Written plain in the YAML, an id must stay a string: no number, boolean or null look-alikes. */
const PLAIN_SAFE = /^[A-Za-z][A-Za-z0-9._-]*$/;
const YAML_WORDS = /^(true|false|null|yes|no|on|off|y|n|~)$/i;

export function withCatalog(text: string, models: readonly PlatformModel[]): string {
  return withModelsSection(withExampleModels(text, models), models);
}

/** The introduction (info.description) with a table of this server's models appended. */
function withModelsSection(text: string, models: readonly PlatformModel[]): string {
  const node = parseDocument(text).getIn(["info", "description"], true);
  if (!isScalar(node) || typeof node.value !== "string" || !node.range) return text;
  const [start, end] = node.range;
  const indent = /\n( +)\S/.exec(text.slice(start, end))?.[1] ?? "    ";
  const lines = `${node.value}\n\n${modelsSection(models)}`.split("\n");
  // The node's source ends with its line break (a block scalar owns it).
  const lineEnd = text.slice(start, end).endsWith("\n") ? "\n" : "";
  const block = `|-\n${lines.map((line) => (line === "" ? "" : `${indent}${line}`)).join("\n")}${lineEnd}`;
  return `${text.slice(0, start)}${block}${text.slice(end)}`;
}

function modelsSection(models: readonly PlatformModel[]): string {
  const rows = models.map((m) => {
    const can = [m.reasoning && "reasoning", m.tools && "tools", m.media && "media"].filter(Boolean).join(", ");
    const training = m.training
      ? [
          `${m.training.ratePerMillion} a million tokens`,
          m.training.thirdParty ? " (third-party trainer)" : "",
          m.training.requiredAgreementVersion === "" ? "" : ` (agreement \`${m.training.requiredAgreementVersion}\`)`,
        ].join("")
      : "no";
    const agreement = m.requiredAgreementVersion === "" ? "" : ` (agreement \`${m.requiredAgreementVersion}\`)`;
    return `| \`${m.id}\` | ${m.contextWindow} | ${m.defaultMaxOutputTokens} | ${can || "text only"} | ${m.pricePerMillionTokens}${agreement} | ${training} |`;
  });
  return [
    "## Models of this server",
    "",
    "From its catalogue file. The window counts input and output tokens; the ceiling applies when a request sets none.",
    "",
    "| model | context window | default output ceiling | capabilities | price a million tokens | fine-tuning |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}

/** The examples' model names, each replaced by a declared model when the catalogue lacks it. */
function withExampleModels(text: string, models: readonly PlatformModel[]): string {
  const declared = new Set(models.map((m) => m.id));
  const usable = models.filter((m) => PLAIN_SAFE.test(m.id) && !YAML_WORDS.test(m.id));
  const chat = usable[0];
  if (chat === undefined) return text;
  const reasoner = usable.find((m) => m.reasoning) ?? chat;
  const base = usable.find((m) => m.training !== undefined) ?? chat;
  let result = text;
  if (!declared.has(EXAMPLE_CHAT))
    result = result.replaceAll(`${PLATFORM_PREFIX}${EXAMPLE_CHAT}`, `${PLATFORM_PREFIX}${base.id}`);
  if (!declared.has(EXAMPLE_REASONER)) result = replaceWord(result, EXAMPLE_REASONER, reasoner.id);
  if (!declared.has(EXAMPLE_CHAT)) result = replaceWord(result, EXAMPLE_CHAT, chat.id);
  return result;
}

/** `word` where it is a whole model id (not the start of a longer one, such as tiny-chat-community). */
function replaceWord(text: string, word: string, by: string): string {
  return text.replaceAll(new RegExp(`(?<![A-Za-z0-9._/-])${word}(?![A-Za-z0-9_-])`, "g"), by);
}
