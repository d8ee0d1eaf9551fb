/**
 * Every rule on a pair of small contracts: the fixture (fixtures/base.openapi.yaml) and a
 * copy with one edit. Each case states exactly what must be reported, as
 * `LEVEL class rule-id`, so a missed change, a wrong class and a spurious extra report
 * all fail. Most cases also run backwards (head → base), which must give the opposite
 * rule. The last test checks that every rule of the catalog is exercised here.
 */
import assert from "node:assert/strict";
import { test } from "vitest";
import { diffDocuments } from "../../tools/contract-diff/diff.ts";
import { RULES } from "../../tools/contract-diff/rules/catalog.ts";
import type { DiffOptions } from "../../tools/contract-diff/rules/context.ts";
import { loadCorpus } from "./corpus.ts";
import { classified, edited, inlineSchema, loadBase, renameSchema, requestProps, responseProps, schemas, type Doc, type Edit } from "./helpers.ts";

interface Case {
  name: string;
  /** An edit applied to the base too, when the case needs a different starting point. */
  base?: Edit;
  head: Edit;
  expect: string[];
  /** What head → base reports. */
  reverse?: string[];
  /** Policies (command-line flags) the case runs with. */
  options?: Partial<DiffOptions>;
}

const fixture = loadBase();
const exercised = new Set<string>();

const closed = { not: {} };
const getThing = (d: Doc) => d.paths["/things/{thing}"].get;
const listThings = (d: Doc) => d.paths["/things"].get;
const createThing = (d: Doc) => d.paths["/things"].post;
const createStream = (d: Doc) => d.paths["/streams"].post;
const param = (d: Doc, name: string) => getThing(d).parameters.find((p: { name?: string }) => p.name === name);
const events = (d: Doc) => createStream(d).responses["200"].content["text/event-stream"].itemSchema.oneOf;
const codeOf = (d: Doc, envelope: string) => schemas(d)[envelope].properties.error.properties.code;
/** Gives the delta event's payload a `type` constant, as every event of this API has. */
const withDeltaType = (type: string) => (d: Doc) => {
  schemas(d).DeltaEvent.properties.type = { type: "string", const: type };
  schemas(d).DeltaEvent.required.push("type");
};

const cases: Case[] = [
  // --- Nothing on the wire changed -------------------------------------------------
  { name: "an unchanged contract reports nothing", head: () => {}, expect: [] },
  {
    name: "renaming models without changing the wire reports nothing",
    head: (d) => {
      renameSchema(d, "Thing", "Item");
      renameSchema(d, "ThingStatus", "ItemStatus");
      renameSchema(d, "Shape", "Form");
      renameSchema(d, "Part", "Piece");
      renameSchema(d, "BadRequestErrorCode", "InvalidCodes");
    },
    expect: [],
  },
  { name: "inlining a referenced schema reports nothing", head: (d) => inlineSchema(d, "ThingId"), expect: [] },
  { name: "renaming a path parameter reports nothing", head: (d) => {
      d.paths["/things/{id}"] = d.paths["/things/{thing}"];
      delete d.paths["/things/{thing}"];
      d.components.parameters.ThingPath.name = "id";
    }, expect: [] },
  { name: "reordering union variants and enum values reports nothing", head: (d) => {
      schemas(d).Shape.anyOf.reverse();
      schemas(d).ThingStatus.enum.reverse();
    }, expect: [] },
  { name: "spelling nullable as a type list reports nothing", head: (d) => {
      responseProps(d).note = { type: ["string", "null"] };
    }, expect: [] },
  { name: "splitting a model with allOf reports nothing", head: (d) => {
      const thing = schemas(d).Thing;
      schemas(d).ThingBase = { type: "object", required: ["id", "name"], properties: { id: thing.properties.id, name: thing.properties.name } };
      delete thing.properties.id;
      delete thing.properties.name;
      thing.required = ["size", "status"];
      thing.allOf = [{ $ref: "#/components/schemas/ThingBase" }];
    }, expect: [] },
  { name: "renaming a security scheme reports nothing", head: (d) => {
      d.components.securitySchemes.Bearer = d.components.securitySchemes.BearerAuth;
      delete d.components.securitySchemes.BearerAuth;
      d.security = [{ Bearer: [] }];
    }, expect: [] },
  { name: "descriptions and examples are not contract", head: (d) => {
      responseProps(d).name.description = "The name.";
      responseProps(d).name.examples = ["a"];
      d.info.description = "Changed.";
    }, expect: [] },

  // --- Paths and operations ---------------------------------------------------------
  { name: "path removed / added", head: (d) => delete d.paths["/streams"], expect: ["ERR clients path-removed"], reverse: ["INFO none path-added"] },
  { name: "operation removed / added", head: (d) => delete d.paths["/things"].get, expect: ["ERR clients operation-removed"], reverse: ["INFO none operation-added"] },
  { name: "path renamed", head: (d) => {
      d.paths["/streams2"] = d.paths["/streams"];
      delete d.paths["/streams"];
    }, expect: ["ERR clients path-removed", "INFO none path-added"] },
  { name: "operationId changed", head: (d) => (getThing(d).operationId = "fetchThing"), expect: ["WARN clients operation-id-changed"] },
  { name: "operation deprecated", head: (d) => (getThing(d).deprecated = true), expect: ["INFO none operation-deprecated"] },

  // --- Parameters --------------------------------------------------------------------
  // BC: unknown query parameters are ignored by default, so a removed one is silently dropped.
  { name: "query parameter removed / optional one added", head: (d) => (getThing(d).parameters = getThing(d).parameters.filter((p: { name?: string }) => p.name !== "view")),
    expect: ["WARN clients request-query-parameter-removed"], reverse: ["INFO none request-parameter-added-optional"] },
  // BC: where implementations reject unknown query parameters (this repo's server), clients still sending it are refused.
  { name: "query parameter removed with --strict-query-params", options: { strictQueryParams: true },
    head: (d) => (getThing(d).parameters = getThing(d).parameters.filter((p: { name?: string }) => p.name !== "view")),
    expect: ["ERR clients request-parameter-removed"] },
  { name: "header parameter removed", head: (d) => (getThing(d).parameters = getThing(d).parameters.filter((p: { name?: string }) => p.name !== "x-trace")),
    expect: ["WARN clients request-header-parameter-removed"] },
  { name: "required parameter added", head: (d) => getThing(d).parameters.push({ name: "tenant", in: "query", required: true, schema: { type: "string" } }),
    expect: ["ERR clients request-parameter-added-required"] },
  { name: "parameter became required / optional", head: (d) => (param(d, "view").required = true),
    expect: ["ERR clients request-parameter-became-required"], reverse: ["WARN implementations request-parameter-became-optional"] },
  { name: "parameter serialization changed", head: (d) => (param(d, "view").explode = false), expect: ["ERR both request-parameter-serialization-changed"] },
  { name: "parameter allows reserved characters / no longer", head: (d) => (param(d, "view").allowReserved = true),
    expect: ["WARN implementations request-parameter-reserved-allowed"], reverse: ["ERR clients request-parameter-reserved-disallowed"] },
  { name: "parameter deprecated", head: (d) => (param(d, "view").deprecated = true), expect: ["INFO none request-parameter-deprecated"] },
  { name: "parameter enum value removed / added", head: (d) => (param(d, "view").schema.enum = ["BASIC"]),
    expect: ["ERR clients request-enum-value-removed"], reverse: ["WARN implementations request-enum-value-added"] },
  { name: "parameter default changed", head: (d) => (param(d, "view").schema.default = "FULL"), expect: ["WARN clients request-default-changed"] },
  { name: "parameter maximum lowered / raised", head: (d) => (listThings(d).parameters[0].schema.maximum = 50),
    expect: ["ERR clients request-maximum-decreased"], reverse: ["WARN implementations request-maximum-increased"] },

  // --- Request body ------------------------------------------------------------------
  { name: "request body removed / required one added", head: (d) => delete createStream(d).requestBody,
    expect: ["ERR clients request-body-removed"], reverse: ["ERR clients request-body-added-required"] },
  { name: "optional request body added", head: (d) => (getThing(d).requestBody = { content: { "application/json": { schema: { type: "object" } } } }),
    expect: ["INFO none request-body-added-optional"] },
  { name: "request body became optional / required", head: (d) => (createThing(d).requestBody.required = false),
    expect: ["WARN implementations request-body-became-optional"], reverse: ["ERR clients request-body-became-required"] },
  { name: "request media type added / removed", head: (d) => (createThing(d).requestBody.content["application/x-www-form-urlencoded"] = { schema: { type: "object" } }),
    expect: ["WARN implementations request-media-type-added"], reverse: ["ERR clients request-media-type-removed"] },

  // --- Request properties (CreateThingRequest is open) -------------------------------
  { name: "request property removed (open object)", head: (d) => delete requestProps(d).status,
    expect: ["WARN clients request-property-removed"], reverse: ["INFO none request-optional-property-added"] },
  { name: "request property removed (closed object) / optional one added to it",
    base: (d) => (schemas(d).CreateThingRequest.unevaluatedProperties = closed),
    head: (d) => delete requestProps(d).status,
    expect: ["ERR clients request-property-removed-from-closed"], reverse: ["WARN implementations request-optional-property-added-to-closed"] },
  { name: "required request property added", head: (d) => {
      requestProps(d).owner = { type: "string" };
      schemas(d).CreateThingRequest.required.push("owner");
    }, expect: ["ERR clients request-required-property-added"], reverse: ["WARN clients request-property-removed"] },
  { name: "request property became required / optional", head: (d) => schemas(d).CreateThingRequest.required.push("size"),
    expect: ["ERR clients request-property-became-required"], reverse: ["WARN implementations request-property-became-optional"] },
  { name: "request object closed / opened", head: (d) => (schemas(d).CreateThingRequest.unevaluatedProperties = closed),
    expect: ["WARN clients request-object-closed"], reverse: ["WARN implementations request-object-opened"] },
  { name: "request type narrowed / widened", head: (d) => (schemas(d).StreamRequest.properties.temperature.type = "integer"),
    expect: ["ERR clients request-type-narrowed"], reverse: ["WARN implementations request-type-widened"] },
  { name: "request type changed (and nothing else about it)", head: (d) => (requestProps(d).name = { type: "integer" }), expect: ["ERR both request-type-changed"] },
  { name: "request null no longer accepted / accepted", head: (d) => (requestProps(d).description = { type: "string" }),
    expect: ["ERR clients request-nullable-removed"], reverse: ["WARN implementations request-nullable-added"] },
  { name: "request format widened / narrowed", head: (d) => (requestProps(d).size.format = "int64"),
    expect: ["WARN implementations request-format-widened"], reverse: ["ERR clients request-format-narrowed"] },
  { name: "request format changed", base: (d) => (requestProps(d).name.format = "uri"), head: (d) => (requestProps(d).name.format = "email"), expect: ["ERR both request-format-changed"] },
  { name: "request maxLength lowered / raised", head: (d) => (requestProps(d).name.maxLength = 128),
    expect: ["ERR clients request-max-length-decreased"], reverse: ["WARN implementations request-max-length-increased"] },
  { name: "request minLength set / removed", head: (d) => (requestProps(d).name.minLength = 1),
    expect: ["ERR clients request-min-length-increased"], reverse: ["WARN implementations request-min-length-decreased"] },
  { name: "request minimum raised / lowered", head: (d) => (requestProps(d).size.minimum = 1),
    expect: ["ERR clients request-minimum-increased"], reverse: ["WARN implementations request-minimum-decreased"] },
  { name: "request maximum made exclusive", head: (d) => {
      delete requestProps(d).size.maximum;
      requestProps(d).size.exclusiveMaximum = 1000;
    }, expect: ["ERR clients request-maximum-decreased"], reverse: ["WARN implementations request-maximum-increased"] },
  { name: "request maxItems lowered / raised", head: (d) => (requestProps(d).tags.maxItems = 5),
    expect: ["ERR clients request-max-items-decreased"], reverse: ["WARN implementations request-max-items-increased"] },
  { name: "request minItems set / removed", head: (d) => (requestProps(d).tags.minItems = 1),
    expect: ["ERR clients request-min-items-increased"], reverse: ["WARN implementations request-min-items-decreased"] },
  { name: "request maxProperties lowered / raised", head: (d) => (requestProps(d).labels.maxProperties = 8),
    expect: ["ERR clients request-max-properties-decreased"], reverse: ["WARN implementations request-max-properties-increased"] },
  { name: "request minProperties set / removed", head: (d) => (requestProps(d).labels.minProperties = 1),
    expect: ["ERR clients request-min-properties-increased"], reverse: ["WARN implementations request-min-properties-decreased"] },
  { name: "request map values narrowed", head: (d) => (requestProps(d).labels.unevaluatedProperties.maxLength = 64), expect: ["ERR clients request-max-length-decreased"] },
  { name: "request multipleOf set / removed", head: (d) => (schemas(d).StreamRequest.properties.temperature.multipleOf = 0.5),
    expect: ["ERR clients request-multiple-of-narrowed"], reverse: ["WARN implementations request-multiple-of-widened"] },
  { name: "request multipleOf changed to an unrelated step", base: (d) => (schemas(d).StreamRequest.properties.temperature.multipleOf = 0.5),
    head: (d) => (schemas(d).StreamRequest.properties.temperature.multipleOf = 0.3), expect: ["ERR both request-multiple-of-changed"] },
  { name: "request uniqueItems set / removed", head: (d) => (requestProps(d).tags.uniqueItems = true),
    expect: ["ERR clients request-unique-items-added"], reverse: ["WARN implementations request-unique-items-removed"] },
  { name: "request pattern set / removed", head: (d) => (requestProps(d).name.pattern = "^[a-z]+$"),
    expect: ["ERR clients request-pattern-added"], reverse: ["WARN implementations request-pattern-removed"] },
  { name: "request values restricted / lifted", head: (d) => (requestProps(d).name.enum = ["a", "b"]),
    expect: ["ERR clients request-enum-set"], reverse: ["WARN implementations request-enum-unset"] },
  { name: "request property default changed", head: (d) => (requestProps(d).size.default = 20), expect: ["WARN clients request-default-changed"] },

  // --- Shared by requests and responses ----------------------------------------------
  { name: "a pattern changed on a schema used both ways", head: (d) => (schemas(d).ThingId.pattern = "^[a-z]+$"),
    expect: ["ERR both request-pattern-changed", "ERR both response-pattern-changed"] },
  { name: "union variant removed / added (request and response)", head: (d) => schemas(d).Shape.anyOf.pop(),
    expect: ["ERR clients request-variant-removed", "WARN implementations response-variant-removed"],
    reverse: ["ERR clients response-variant-added", "WARN implementations request-variant-added"] },
  { name: "a change inside a matched variant", head: (d) => (schemas(d).Circle.properties.radius.minimum = 0),
    expect: ["ERR clients request-minimum-increased", "WARN implementations response-minimum-increased"] },
  { name: "enum value added / removed (request and response)", head: (d) => schemas(d).ThingStatus.enum.push("deleted"),
    expect: ["WARN clients response-enum-value-added", "WARN implementations request-enum-value-added"],
    reverse: ["ERR clients request-enum-value-removed", "WARN both response-enum-value-removed"] },

  // --- Response properties (Thing is closed) -----------------------------------------
  { name: "required response property removed", head: (d) => {
      delete responseProps(d).name;
      schemas(d).Thing.required = schemas(d).Thing.required.filter((n: string) => n !== "name");
    }, expect: ["ERR clients response-required-property-removed"], reverse: ["ERR implementations response-required-property-added"] },
  { name: "optional response property removed / added to a closed object", head: (d) => delete responseProps(d).tags,
    expect: ["WARN clients response-optional-property-removed"], reverse: ["WARN clients response-optional-property-added-to-closed"] },
  { name: "optional response property added to an open object", base: (d) => (schemas(d).Thing.unevaluatedProperties = {}),
    head: (d) => (responseProps(d).color = { type: "string" }), expect: ["INFO none response-optional-property-added"] },
  { name: "response property became optional / required", head: (d) => (schemas(d).Thing.required = ["id", "name", "status"]),
    expect: ["ERR clients response-property-became-optional"], reverse: ["WARN implementations response-property-became-required"] },
  { name: "response object opened / closed", head: (d) => (schemas(d).Thing.unevaluatedProperties = {}),
    expect: ["WARN clients response-object-opened"], reverse: ["WARN implementations response-object-closed"] },
  { name: "response type widened / narrowed", head: (d) => (responseProps(d).size.type = "number"),
    expect: ["ERR clients response-type-widened"], reverse: ["WARN implementations response-type-narrowed"] },
  { name: "response type changed", head: (d) => (responseProps(d).size = { type: "string" }), expect: ["ERR both response-type-changed"] },
  { name: "response null now possible / no longer", head: (d) => (responseProps(d).name = { anyOf: [{ type: "string", maxLength: 256 }, { type: "null" }] }),
    expect: ["ERR clients response-nullable-added"], reverse: ["WARN implementations response-nullable-removed"] },
  { name: "response format widened / narrowed", head: (d) => (responseProps(d).size.format = "int64"),
    expect: ["ERR clients response-format-widened"], reverse: ["WARN implementations response-format-narrowed"] },
  { name: "response format changed", head: (d) => (responseProps(d).created_at.format = "date"), expect: ["ERR both response-format-changed"] },
  { name: "response maxLength removed / set", head: (d) => delete responseProps(d).name.maxLength,
    expect: ["ERR clients response-max-length-increased"], reverse: ["WARN implementations response-max-length-decreased"] },
  { name: "response minLength lowered / raised", base: (d) => (responseProps(d).name.minLength = 2), head: (d) => (responseProps(d).name.minLength = 1),
    expect: ["ERR clients response-min-length-decreased"], reverse: ["WARN implementations response-min-length-increased"] },
  { name: "response maximum raised / lowered", head: (d) => (responseProps(d).size.maximum = 5000),
    expect: ["ERR clients response-maximum-increased"], reverse: ["WARN implementations response-maximum-decreased"] },
  { name: "response minimum lowered / raised", head: (d) => (responseProps(d).size.minimum = -1),
    expect: ["ERR clients response-minimum-decreased"], reverse: ["WARN implementations response-minimum-increased"] },
  { name: "response maxItems raised / lowered", head: (d) => (responseProps(d).tags.maxItems = 20),
    expect: ["ERR clients response-max-items-increased"], reverse: ["WARN implementations response-max-items-decreased"] },
  { name: "response minItems lowered / raised", base: (d) => (responseProps(d).tags.minItems = 1), head: (d) => delete responseProps(d).tags.minItems,
    expect: ["ERR clients response-min-items-decreased"], reverse: ["WARN implementations response-min-items-increased"] },
  { name: "response maxProperties raised / lowered", head: (d) => (responseProps(d).metadata.maxProperties = 32),
    expect: ["ERR clients response-max-properties-increased"], reverse: ["WARN implementations response-max-properties-decreased"] },
  { name: "response minProperties lowered / raised", base: (d) => (responseProps(d).metadata.minProperties = 1), head: (d) => delete responseProps(d).metadata.minProperties,
    expect: ["ERR clients response-min-properties-decreased"], reverse: ["WARN implementations response-min-properties-increased"] },
  { name: "response map values changed", head: (d) => (responseProps(d).metadata.unevaluatedProperties = { type: "integer" }), expect: ["ERR both response-type-changed"] },
  { name: "response multipleOf removed / set", base: (d) => (responseProps(d).size.multipleOf = 10), head: (d) => delete responseProps(d).size.multipleOf,
    expect: ["ERR clients response-multiple-of-widened"], reverse: ["WARN implementations response-multiple-of-narrowed"] },
  { name: "response multipleOf changed", base: (d) => (responseProps(d).size.multipleOf = 10), head: (d) => (responseProps(d).size.multipleOf = 15), expect: ["ERR both response-multiple-of-changed"] },
  { name: "response uniqueItems removed / set", base: (d) => (responseProps(d).tags.uniqueItems = true), head: (d) => delete responseProps(d).tags.uniqueItems,
    expect: ["ERR clients response-unique-items-removed"], reverse: ["WARN implementations response-unique-items-added"] },
  { name: "response pattern removed / set", base: (d) => (responseProps(d).name.pattern = "^.+$"), head: (d) => delete responseProps(d).name.pattern,
    expect: ["ERR clients response-pattern-removed"], reverse: ["WARN implementations response-pattern-added"] },
  { name: "response values lifted / restricted", base: (d) => (responseProps(d).name.enum = ["a"]), head: (d) => delete responseProps(d).name.enum,
    expect: ["ERR clients response-enum-unset"], reverse: ["WARN implementations response-enum-set"] },
  { name: "response default changed", head: (d) => (responseProps(d).size.default = 1), expect: ["INFO none response-default-changed"] },
  { name: "a change in a recursive model is found once", head: (d) => (schemas(d).Part.properties.name.maxLength = 10), expect: ["WARN implementations response-max-length-decreased"] },

  // --- Responses, headers, media types -------------------------------------------------
  { name: "success status changed", head: (d) => {
      getThing(d).responses["201"] = getThing(d).responses["200"];
      delete getThing(d).responses["200"];
    }, expect: ["ERR clients response-success-status-removed", "WARN clients response-success-status-added"] },
  { name: "error status removed (and with it its codes' pairing)", head: (d) => delete getThing(d).responses["404"],
    expect: ["ERR both error-code-status-removed", "WARN implementations response-non-success-status-removed"] },
  { name: "error status added", head: (d) => (getThing(d).responses["500"] = { description: "Failure." }), expect: ["INFO none response-non-success-status-added"] },
  { name: "response media type removed / added", head: (d) => (getThing(d).responses["200"].content["application/yaml"] = { schema: { type: "string" } }),
    expect: ["INFO none response-media-type-added"], reverse: ["ERR clients response-media-type-removed"] },
  { name: "required response header removed / added", head: (d) => delete getThing(d).responses["200"].headers["x-request-id"],
    expect: ["ERR clients response-required-header-removed"], reverse: ["ERR implementations response-required-header-added"] },
  { name: "optional response header removed / added", head: (d) => delete getThing(d).responses["200"].headers["x-served-by"],
    expect: ["WARN clients response-optional-header-removed"], reverse: ["INFO none response-optional-header-added"] },
  { name: "response header became optional / required", head: (d) => (getThing(d).responses["200"].headers["x-request-id"].required = false),
    expect: ["ERR clients response-header-became-optional"], reverse: ["WARN implementations response-header-became-required"] },
  { name: "response header schema changed", head: (d) => (getThing(d).responses["200"].headers["x-request-id"].schema = { type: "integer" }), expect: ["ERR both response-type-changed"] },

  // --- Server-sent events --------------------------------------------------------------
  { name: "SSE event removed / added", head: (d) => events(d).splice(1, 1),
    expect: ["ERR both sse-event-removed"], reverse: ["WARN clients sse-event-added"] },
  { name: "SSE event field removed", head: (d) => {
      delete schemas(d).DeltaEvent.properties.index;
      schemas(d).DeltaEvent.required = ["text"];
    }, expect: ["ERR clients response-required-property-removed"] },
  { name: "SSE terminal sentinel changed", head: (d) => (events(d)[3].properties.data.const = "[END]"), expect: ["ERR both sse-event-removed", "WARN clients sse-event-added"] },
  // BC: clients switch on the payload's `type`; renaming it under the same event name breaks them (and base implementations send the old one).
  { name: "SSE event payload type constant renamed", base: withDeltaType("delta"), head: (d) => (schemas(d).DeltaEvent.properties.type.const = "text.delta"),
    expect: ["ERR both sse-event-type-changed"], reverse: ["ERR both sse-event-type-changed"] },
  { name: "SSE event payload type constant added: a required field added, not a rename", head: withDeltaType("delta"), expect: ["ERR implementations response-required-property-added"] },

  // --- Security and servers ------------------------------------------------------------
  { name: "security scheme swapped", head: (d) => (getThing(d).security = [{ ApiKeyAuth: [] }]),
    expect: ["ERR clients security-alternative-removed", "WARN implementations security-alternative-added"] },
  { name: "security alternative added / removed", head: (d) => (d.security = [{ BearerAuth: [] }, { ApiKeyAuth: [] }]),
    expect: ["WARN implementations security-alternative-added"], reverse: ["ERR clients security-alternative-removed"] },
  { name: "server URL changed", head: (d) => (d.servers[0].url = "{origin}/v2"), expect: ["INFO none server-added", "WARN clients server-removed"] },

  // --- Any team's document: the families of issue 41 (the corpus has many more) ---------
  // BC: a response constant replaced reaches every client; implementations built on the base still send the old one.
  { name: "const changed in a response", base: (d) => (responseProps(d).kind = { const: "thing" }), head: (d) => (responseProps(d).kind = { const: "item" }),
    expect: ["ERR both response-const-changed"], reverse: ["ERR both response-const-changed"] },
  // BC: a required property made readOnly is no longer sent by clients; the response still has it.
  { name: "request property became readOnly / writable again", head: (d) => (requestProps(d).size.readOnly = true),
    expect: ["WARN clients request-property-became-read-only"], reverse: ["INFO none request-optional-property-added"] },
  // BC: a required response property made writeOnly is never answered again.
  { name: "response property became writeOnly", head: (d) => (responseProps(d).name.writeOnly = true),
    expect: ["ERR clients response-required-property-became-write-only"], reverse: ["ERR implementations response-required-property-added"] },
  // BC: requests must now hold a matching tag.
  { name: "request contains added / removed", head: (d) => (requestProps(d).tags.contains = { const: "red" }),
    expect: ["ERR clients request-contains-added"], reverse: ["WARN implementations request-contains-removed"] },
  // BC: clients whose token lacks the new scope are rejected; dropping it rejects no one.
  { name: "security scope required / dropped", base: (d) => (d.components.securitySchemes.OAuth = { type: "oauth2", flows: { clientCredentials: { tokenUrl: "https://auth.example/token", scopes: { read: "r", write: "w" } } } }, getThing(d).security = [{ OAuth: ["read"] }]),
    head: (d) => (getThing(d).security = [{ OAuth: ["read", "write"] }]),
    expect: ["ERR clients security-scope-added"], reverse: ["WARN implementations security-scope-removed"] },
  // BC: an operation that needed no authentication now does.
  { name: "security requirement added / removed", base: (d) => (getThing(d).security = []), head: (d) => delete getThing(d).security,
    expect: ["ERR clients security-requirement-added"], reverse: ["WARN implementations security-requirement-removed"] },
  // BC: `X-Trace: abc` is not an integer; every integer is a string.
  { name: "header parameter text narrowed / widened", head: (d) => (param(d, "x-trace").schema = { type: "integer" }),
    expect: ["ERR clients request-parameter-text-narrowed"], reverse: ["WARN implementations request-parameter-text-widened"] },
  // BC: `view=BASIC` was valid and is not an integer; `view=1` was not valid: neither holds the other.
  { name: "query parameter text changed (an enum of words to integers)", head: (d) => (param(d, "view").schema = { type: "integer" }),
    expect: ["ERR both request-parameter-text-changed"] },
  // BC: a deprecated operation removed after its sunset is announced (WARN); before it, ERR.
  { name: "deprecated operation removed after / before its sunset", options: { date: "2026-06-01" },
    base: (d) => Object.assign(listThings(d), { deprecated: true, "x-sunset": "2026-01-01" }), head: (d) => delete d.paths["/things"].get,
    expect: ["WARN clients operation-removed-after-deprecation"] },
  { name: "deprecated operation removed before its sunset", options: { date: "2025-06-01" },
    base: (d) => Object.assign(listThings(d), { deprecated: true, "x-sunset": "2026-01-01" }), head: (d) => delete d.paths["/things"].get,
    expect: ["ERR clients operation-removed-before-sunset"] },
  // BC: every body matching both branches of the new oneOf is refused.
  { name: "request body wrapped in an overlapping oneOf", head: (d) => (createThing(d).requestBody.content["application/json"].schema = { oneOf: [{ $ref: "#/components/schemas/CreateThingRequest" }, { type: "object", required: ["name"], properties: { name: { type: "string" }, owner: { type: "string" } } }] }),
    expect: ["ERR clients request-one-of-overlapping", "WARN implementations request-variant-added"] },
  // The widening it is: no value that was valid stops being valid.
  { name: "request pattern generalized to .*", base: (d) => (requestProps(d).name.pattern = "^[a-z]+$"), head: (d) => (requestProps(d).name.pattern = ".*"),
    expect: ["WARN implementations request-pattern-generalized"], reverse: ["ERR clients request-pattern-added"] },

  // --- This API's error codes ------------------------------------------------------------
  { name: "error code removed / added (append-only)", head: (d) => (schemas(d).ErrorCode.enum = ["INVALID_REQUEST", "NOT_FOUND", "ALREADY_EXISTS"]),
    expect: ["ERR both error-code-removed"], reverse: ["INFO none error-code-added"] },
  { name: "error code renamed", head: (d) => {
      schemas(d).ErrorCode.enum = ["INVALID_REQUEST", "MISSING", "ALREADY_EXISTS", "INTERNAL"];
      codeOf(d, "NotFoundError").enum = ["MISSING"];
    }, expect: ["ERR both error-code-removed", "INFO none error-code-added"] },
  { name: "a new code on an existing status is compatible", head: (d) => {
      schemas(d).ErrorCode.enum.push("RATE_LIMITED");
      schemas(d).BadRequestErrorCode.anyOf.push({ type: "string", enum: ["RATE_LIMITED"] });
    }, expect: ["INFO none error-code-added"] },
  { name: "a published code paired with another status", head: (d) => schemas(d).BadRequestErrorCode.anyOf.push({ type: "string", enum: ["ALREADY_EXISTS"] }),
    expect: ["ERR clients error-code-status-added"], reverse: ["ERR both error-code-status-removed"] },
  { name: "a code moved from one status to another", head: (d) => {
      codeOf(d, "ConflictError").anyOf = [{ type: "string", enum: ["INVALID_REQUEST"] }];
      schemas(d).BadRequestErrorCode.anyOf.push({ type: "string", enum: ["ALREADY_EXISTS"] });
    }, expect: ["ERR both error-code-status-removed", "ERR clients error-code-status-added", "ERR clients error-code-status-added"] },
];

for (const c of cases) {
  test(c.name, () => {
    const base = c.base ? edited(fixture, c.base) : fixture;
    const head = edited(base, c.head);
    assert.deepEqual(classified(base, head, c.options), [...c.expect].sort(), "base → head");
    if (c.reverse !== undefined) assert.deepEqual(classified(head, base, c.options), [...c.reverse].sort(), "head → base");
    for (const expectation of [...c.expect, ...(c.reverse ?? [])]) exercised.add(expectation.split(" ")[2]!);
  });
}

test("an API key scheme kept by name but moved to another header reads as one alternative gone, another come", () => {
  const base = edited(fixture, (d) => (getThing(d).security = [{ ApiKeyAuth: [] }]));
  const head = edited(base, (d) => (d.components.securitySchemes.ApiKeyAuth.name = "x-key"));
  const messages = diffDocuments(base, head).map((c) => `${c.rule.id}: ${c.message}`);
  assert.deepEqual(messages.sort(), [
    "security-alternative-added: security `ApiKeyAuth` (apiKey in header x-key) now accepted",
    "security-alternative-removed: security `ApiKeyAuth` (apiKey in header x-api-key) no longer accepted",
  ]);
});

test("every rule in the catalog is exercised by a case above or by a pair of the corpus (corpus.test.ts)", () => {
  const inCorpus = new Set(loadCorpus().flatMap((p) => [...p.expect, ...(p.reverse ?? [])].map((e) => e.split(" ")[1]!)));
  const missing = RULES.map((r) => r.id).filter((id) => !exercised.has(id) && !inCorpus.has(id));
  assert.deepEqual(missing, []);
});
