/**
 * An operator's configuration file (the catalogue, the routing file) read into its
 * document, with each failure naming the file: one that cannot be read gives the reason,
 * one that does not parse gives the parser's first line.
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";

/**
 * The document of `file`, called `source` in messages (e.g. `routing file <path>`): JSON,
 * or YAML when `yamlByName` and the file is named `.yaml` or `.yml`.
 */
export function readConfigDocument(file: string, source: string, options: { yamlByName: boolean }): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`${source}: cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`, {
      cause: error,
    });
  }
  const yaml = options.yamlByName && /\.ya?ml$/i.test(file);
  try {
    return yaml ? parseYaml(text, { prettyErrors: true }) : JSON.parse(text);
  } catch (error) {
    const what = yaml ? "not YAML" : "not JSON";
    throw new Error(`${source}: ${what} (${(error as Error).message.split("\n")[0]})`, { cause: error });
  }
}
