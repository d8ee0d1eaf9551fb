/** Servers: the base URLs clients are given (with variables at their defaults). */
import { defineRule, type Change } from "../model.ts";
import { isObject, type Doc } from "../openapi.ts";

export const serverRemoved = defineRule({
  id: "server-removed",
  level: "WARN",
  breaks: "clients",
  description: "A server URL was removed or changed; clients configured with it may no longer reach the API.",
});
export const serverAdded = defineRule({
  id: "server-added",
  level: "INFO",
  breaks: "none",
  description: "A new server URL.",
});

export const serverRules = [serverRemoved, serverAdded];

function serverUrls(doc: Doc): Set<string> {
  const servers: unknown[] = Array.isArray(doc.servers) ? doc.servers : [];
  return new Set(
    servers.filter(isObject).map((server) => {
      let url = String(server.url);
      for (const [name, variable] of Object.entries(isObject(server.variables) ? server.variables : {})) {
        url = url.replaceAll(`{${name}}`, String(isObject(variable) ? variable.default : ""));
      }
      return url;
    }),
  );
}

export function checkServers(base: Doc, head: Doc): Change[] {
  const before = serverUrls(base);
  const after = serverUrls(head);
  return [
    ...[...before]
      .filter((u) => !after.has(u))
      .map((url): Change => ({
        rule: serverRemoved,
        message: `server \`${url}\` removed`,
        part: "servers",
        path: [],
        before: url,
      })),
    ...[...after]
      .filter((u) => !before.has(u))
      .map((url): Change => ({
        rule: serverAdded,
        message: `server \`${url}\` added`,
        part: "servers",
        path: [],
        after: url,
      })),
  ];
}
