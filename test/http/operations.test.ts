/**
 * The operation table read from the contract: what authentication learns from it must
 * match the contract, so a renamed operation or a new apiKey header fails here.
 */
import assert from "node:assert/strict";
import { describe, it } from "vitest";
import { PAID_OPERATIONS } from "../../server/http/billing.ts";
import { contractDocument } from "../../server/http/contract.ts";
import { OperationTable } from "../../server/http/operations.ts";

const table = new OperationTable();

describe("operation table", () => {
  it("every paid operation exists in the contract", () => {
    const ids = new Set(table.operations.map((o) => o.operationId));
    for (const id of PAID_OPERATIONS) assert.ok(ids.has(id), `${id} is not an operation of the contract`);
  });

  it("the paid operations are exactly those whose contract declares a 402", () => {
    const doc = contractDocument() as {
      paths: Record<string, Record<string, { operationId: string; responses: object }>>;
    };
    const declaring402 = Object.values(doc.paths).flatMap((item) =>
      Object.values(item)
        .filter((op) => "402" in op.responses)
        .map((op) => op.operationId),
    );
    assert.deepEqual(new Set(declaring402), new Set(PAID_OPERATIONS));
  });

  it("x-api-key is accepted on POST /messages only", () => {
    const withApiKey = table.operations.filter((o) => o.apiKeyHeaders.length > 0);
    assert.deepEqual(
      withApiKey.map((o) => [o.method, o.template, o.apiKeyHeaders]),
      [["post", "/messages", ["x-api-key"]]],
    );
  });

  it("no operation is public", () => {
    assert.deepEqual(
      table.operations.filter((o) => o.public).map((o) => o.operationId),
      [],
    );
  });

  it("previous_response_id is the not-supported field of createResponse", () => {
    const op = table.match("POST", "/v1/responses")?.operation;
    assert.deepEqual(op?.notSupportedFields, ["previous_response_id"]);
  });

  it("a custom method beats the plain path with the method it has", () => {
    assert.equal(table.match("POST", "/v1/accounts/acme/datasets/d1:upload")?.operation?.operationId, "uploadDataset");
    const get = table.match("GET", "/v1/accounts/acme/datasets/d1:upload");
    assert.equal(get?.operation?.operationId, "getDataset");
    assert.equal(get?.params.dataset, "d1:upload");
    assert.equal(table.match("POST", "/v1/accounts/acme/dpoJobs/j1:cancel")?.params.job, "j1");
  });

  it("path parameters come decoded", () => {
    assert.deepEqual(table.match("GET", "/v1/models/accounts%2Facme%2Fmodels%2Fm")?.params, {
      model: "accounts/acme/models/m",
    });
    assert.deepEqual(table.match("GET", "/v1/accounts/acme/datasets")?.params, { account: "acme" });
  });

  it("a path without the method gives the allowed methods; an unknown path nothing", () => {
    const match = table.match("DELETE", "/v1/responses");
    assert.equal(match?.operation, undefined);
    assert.deepEqual(match?.allowedMethods, ["POST"]);
    assert.equal(table.match("GET", "/v1/nope"), undefined);
    assert.equal(table.match("GET", "/models"), undefined);
  });

  it("matches case-sensitively, as routing does", () => {
    assert.equal(table.match("GET", "/v1/Models"), undefined);
  });

  it("one trailing slash is allowed; an empty segment or a second slash matches nothing", () => {
    assert.equal(table.match("GET", "/v1/models/")?.operation?.operationId, "listModels");
    assert.equal(table.match("GET", "/v1/accounts/acme/datasets/")?.params.account, "acme");
    assert.equal(table.match("GET", "/v1/models//"), undefined);
    assert.equal(table.match("GET", "/v1/accounts//datasets"), undefined);
    // A custom method with an empty parameter is the plain template's, whose methods do not include POST.
    assert.equal(
      table.match("POST", "/v1/accounts/acme/dpoJobs/:cancel")?.template,
      "/accounts/{account}/dpoJobs/{job}",
    );
  });

  it("agrees with a regular expression per template on every template filled in", () => {
    const doc = contractDocument() as { paths: Record<string, Record<string, { operationId: string }>> };
    const templates = Object.keys(doc.paths);
    const reference = (method: string, path: string) => {
      const fits = templates.filter((t) =>
        new RegExp(`^${t.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "([^/]+)")}/?$`).test(path),
      );
      fits.sort((a, b) => b.replace(/\{[^}]+\}/g, "").length - a.replace(/\{[^}]+\}/g, "").length);
      const chosen = fits.find((t) => doc.paths[t]?.[method] !== undefined) ?? fits[0];
      return chosen === undefined ? undefined : (doc.paths[chosen]?.[method]?.operationId ?? `405 ${chosen}`);
    };
    for (const template of templates) {
      for (const fill of ["x", "a:b", "a%2Fb", "x:cancel", "x:upload"]) {
        const path = template.replace(/\{[^}]+\}/g, fill);
        for (const method of ["get", "post", "delete"]) {
          const match = table.match(method.toUpperCase(), `/v1${path}`);
          const got = match === undefined ? undefined : (match.operation?.operationId ?? `405 ${match.template}`);
          assert.equal(got, reference(method, path), `${method} ${path}`);
        }
      }
    }
  });
});
