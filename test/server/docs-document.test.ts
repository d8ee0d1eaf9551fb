/**
 * GET /docs/openapi.yaml, the document the docs page renders: its `origin` server variable
 * defaults to the origin the request reached, so "Try it out" calls the server serving the
 * page on whatever address and port; everything else is the generated document unchanged.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import http from "node:http";
import { afterAll, beforeAll, describe, it } from "vitest";
import { parse } from "yaml";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";

const GENERATED = new URL("../../generated/openapi.3.1.yaml", import.meta.url);

interface ServedDocument {
  servers: { url: string; variables: { origin: { default: string } } }[];
}

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** The served document's text, asked for with the given Host header (node:http lets a test set it). */
function getDocument(host?: string): Promise<{ status: number; type: string; text: string }> {
  const { hostname, port } = new URL(server.origin);
  return new Promise((resolve, reject) => {
    const request = http.get(
      { hostname, port, path: "/docs/openapi.yaml", ...(host !== undefined ? { headers: { host } } : {}) },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, type: response.headers["content-type"] ?? "", text }),
        );
      },
    );
    request.on("error", reject);
  });
}

function originDefault(text: string): string {
  return (parse(text) as ServedDocument).servers[0]?.variables.origin.default ?? "";
}

describe("the docs page's document", () => {
  it("defaults the origin variable to the server's own origin", async () => {
    const served = await getDocument();
    assert.equal(served.status, 200);
    assert.match(served.type, /^application\/yaml/);
    assert.equal(originDefault(served.text), server.origin);
    assert.notEqual(server.origin, "http://127.0.0.1:8080", "the test server listens on an ephemeral port");
  });

  it("follows the Host the request was sent to, such as a name in front of the server", async () => {
    assert.equal(originDefault((await getDocument("docs.example.test:9443")).text), "http://docs.example.test:9443");
  });

  it("keeps an odd Host a plain value of that one field", async () => {
    const served = await getDocument('example.test:1"x');
    assert.equal(originDefault(served.text), 'http://example.test:1"x');
  });

  it("changes nothing else of the generated document but the introduction's list of models", async () => {
    const generated = readFileSync(GENERATED, "utf8");
    const served = (await getDocument()).text;
    const expected = parse(generated) as ServedDocument & { info: { description: string } };
    (expected.servers[0] as ServedDocument["servers"][0]).variables.origin.default = server.origin;
    const document = parse(served) as typeof expected;
    // The committed catalogue declares the models the examples name: the examples are as generated.
    assert.ok(document.info.description.startsWith(`${expected.info.description}\n\n## Models of this server\n`));
    assert.match(
      document.info.description,
      /\| `tiny-chat` \| 16384 \| 256 \| tools \| 0\.10 \| 0\.50 a million tokens \|/,
    );
    document.info.description = expected.info.description;
    assert.deepEqual(document, expected);
    const tail = (text: string) => text.slice(text.indexOf("\ntags:"));
    assert.equal(
      tail(served).split("\n").length,
      tail(generated).split("\n").length,
      "only the default's value is rewritten",
    );
  });
});
