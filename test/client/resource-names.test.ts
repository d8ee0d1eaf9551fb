/** The contract's resource names, written and read by the one module the client, CLI and server share. */
import assert from "node:assert/strict";
import { describe, it } from "vitest";
import {
  PLATFORM_ACCOUNT,
  accountOfName,
  datasetVersionName,
  parseDatasetName,
  parseResourceName,
  resourceName,
} from "../../client/index.ts";
import { contractDocument } from "../../server/http/contract.ts";

/** The `pattern` the generated document gives a schema's `name` property. */
function namePattern(schema: string): RegExp {
  const schemas = (contractDocument() as { components: { schemas: Record<string, unknown> } }).components.schemas;
  const pattern = (schemas[schema] as { properties: { name: { pattern: string } } }).properties.name.pattern;
  return new RegExp(pattern);
}

describe("resource names", () => {
  it("writes the names the contract's patterns accept", () => {
    assert.match(resourceName("acme", "datasets", "pirate"), namePattern("Dataset"));
    assert.match(datasetVersionName("acme", "pirate", 2), namePattern("DatasetVersion"));
    assert.match(resourceName("acme", "trainingJobs", "sft-1"), namePattern("TrainingJob"));
    assert.equal(resourceName(PLATFORM_ACCOUNT, "models", "tiny-chat"), "accounts/maas/models/tiny-chat");
  });

  it("reads a name back into the parts it was written from", () => {
    assert.deepEqual(parseResourceName("accounts/acme/trainingJobs/sft-1", "trainingJobs"), {
      account: "acme",
      id: "sft-1",
    });
    assert.deepEqual(parseResourceName("accounts/acme/deployments/nova", "deployments"), {
      account: "acme",
      id: "nova",
    });
    assert.deepEqual(parseDatasetName("accounts/acme/datasets/pirate"), { account: "acme", dataset: "pirate" });
    assert.deepEqual(parseDatasetName("accounts/acme/datasets/pirate/versions/12"), {
      account: "acme",
      dataset: "pirate",
      version: 12,
    });
    assert.equal(accountOfName("accounts/acme/trainingJobs/sft-1"), "acme");
  });

  it("refuses what is not a name of that collection", () => {
    const notJobs = ["accounts/acme/models/sft-1", "accounts/acme/trainingJobs/", "accounts//trainingJobs/x"];
    for (const name of [...notJobs, "accounts/acme/trainingJobs/a/b", "sft-1"])
      assert.equal(parseResourceName(name, "trainingJobs"), undefined, name);
    for (const name of [
      "accounts/acme/datasets/pirate/versions/0",
      "accounts/acme/datasets/pirate/versions/007",
      "accounts/acme/datasets/pirate/versions/1234567890",
      "accounts/acme/datasets/pirate/versions",
      "accounts/acme/datasets",
      "pirate",
    ])
      assert.equal(parseDatasetName(name), undefined, name);
    assert.equal(accountOfName("tiny-chat"), undefined);
  });
});
