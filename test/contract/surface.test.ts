/**
 * The surface of the generated OpenAPI documents, checked against the interface document
 * (docs/interface-document-v0.2.0.md) and docs/contract-decisions.md. Written from those two texts,
 * not from the TypeSpec sources: each test is named after the rule it proves.
 *
 * Most tests collect every violation and compare the list with `[]`, so one failure shows
 * everything that is wrong, not only the first thing.
 */
import assert from "node:assert/strict";
import { describe, test } from "vitest";
import {
  contentSchema,
  deref,
  errorStatuses,
  findOperation,
  header,
  isClosed,
  isFalseSchema,
  isRequired,
  keyword,
  literalValues,
  loadDocument,
  operation,
  operations,
  parameter,
  parameters,
  propertyNames,
  reachableSchemas,
  requestJsonSchema,
  responses,
  schemaAt,
  schemasAt,
  successJsonSchema,
  successResponses,
  types,
  validatorFor,
  type Node,
} from "./openapi-walk.ts";
import {
  ACCOUNT,
  ALL_ERROR_CODES,
  ALL_OPERATIONS,
  CODES_BY_STATUS,
  COMMON_ERROR_STATUSES,
  ERROR_TYPES,
  GENERATING_OPERATIONS,
  INFERENCE_ERROR_STATUSES,
  JOB_COLLECTIONS,
  jobPaths,
  MESSAGES_STREAM_EVENTS,
  RESPONSE_STREAM_EVENTS,
  UNSENT_CODES,
  TYPE_BY_STATUS,
  type ExpectedOperation,
} from "./seed-surface.ts";

const doc = loadDocument("3.1");
const doc32 = loadDocument("3.2");

const label = (o: { method: string; path: string }): string => `${o.method} ${o.path}`;
const sorted = (values: Iterable<unknown>): unknown[] => [...values].map(String).sort();

/** The expected operations that exist in the document, so that one missing operation fails only the test that lists operations. */
function present(expected: ExpectedOperation[]): (ExpectedOperation & { op: Node })[] {
  return expected.flatMap((e) => {
    const op = findOperation(doc, e.method, e.path);
    return op === undefined ? [] : [{ ...e, op }];
  });
}

/** Checks one numeric/string constraint keyword; returns a violation text or nothing. */
function expectKeyword(where: string, schema: Node, name: string, expected: unknown): string[] {
  if (schema === undefined) return [`${where}: missing`];
  const actual = keyword(doc, schema, name);
  return actual === expected
    ? []
    : [`${where}: ${name} is ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`];
}

/** Checks that each dotted field path exists below `schema`; returns violations. */
function missingFields(where: string, schema: Node, fields: string[]): string[] {
  return fields.filter((f) => schemaAt(doc, schema, f) === undefined).map((f) => `${where}: no field ${f}`);
}

/** Checks that each dotted field path resolves to the given JSON types; returns violations. */
function fieldsOfType(where: string, schema: Node, fields: string[], expected: string[]): string[] {
  return fields.flatMap((f) => {
    const s = schemaAt(doc, schema, f);
    if (s === undefined) return [`${where}: no field ${f}`];
    const actual = sorted(types(doc, s));
    return JSON.stringify(actual) === JSON.stringify(sorted(expected))
      ? []
      : [`${where}: ${f} has type ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`];
  });
}

/** Checks that a field admits at least the given literal values. */
function admitsValues(where: string, schema: Node, field: string, values: string[]): string[] {
  const found = schemasAt(doc, schema, field);
  if (found.length === 0) return [`${where}: no field ${field}`];
  const admitted = new Set<unknown>();
  for (const s of found) {
    const literal = literalValues(doc, s);
    if (literal === undefined) return [`${where}: ${field} is not an enum`];
    for (const v of literal) admitted.add(v);
  }
  return values.filter((v) => !admitted.has(v)).map((v) => `${where}: ${field} does not admit ${v}`);
}

// ---------------------------------------------------------------------------

describe("Endpoints", () => {
  test("every operation of the interface document exists with its method and path", () => {
    const missing = ALL_OPERATIONS.filter((e) => findOperation(doc, e.method, e.path) === undefined).map(label);
    assert.deepEqual(missing, []);
  });

  test("paths are relative to the server url {origin}/v1 (no path repeats /v1)", () => {
    const wrong = Object.keys(doc.paths ?? {}).filter((p) => p === "/v1" || p.startsWith("/v1/"));
    assert.deepEqual(wrong, []);
  });

  test("rule 3 of POST /responses: there is no GET or DELETE on /responses/{id}", () => {
    const retrievals = operations(doc)
      .filter((o) => o.path.startsWith("/responses/") && (o.method === "GET" || o.method === "DELETE"))
      .map(label);
    assert.deepEqual(retrievals, []);
  });

  test("every operation has an operationId and a description", () => {
    const violations = operations(doc).flatMap((o) => [
      ...(typeof o.op.operationId === "string" && o.op.operationId !== "" ? [] : [`${label(o)}: no operationId`]),
      ...(typeof o.op.description === "string" && o.op.description.trim() !== ""
        ? []
        : [`${label(o)}: no description`]),
    ]);
    assert.deepEqual(violations, []);
  });

  test("the 3.2 document has the same operations as the 3.1 document", () => {
    assert.deepEqual(sorted(operations(doc32).map(label)), sorted(operations(doc).map(label)));
  });

  test("job creation answers 201 (endpoint 4); the other job operations answer 200", () => {
    const violations = JOB_COLLECTIONS.flatMap((c) =>
      Object.entries(jobPaths(c)).flatMap(([name, e]) => {
        const op = findOperation(doc, e.method, e.path);
        if (op === undefined) return [`${label(e)}: missing`];
        const success = successResponses(doc, op).map(([s]) => s);
        const expected = name === "create" ? ["201"] : ["200"];
        return JSON.stringify(success) === JSON.stringify(expected)
          ? []
          : [`${label(e)}: success ${success}, expected ${expected}`];
      }),
    );
    assert.deepEqual(violations, []);
  });
});

describe("Versioning", () => {
  for (const [name, d] of [
    ["3.1", doc],
    ["3.2", doc32],
  ] as const) {
    test(`the server url is {origin}/v1 (${name} document)`, () => {
      assert.deepEqual(
        (d.servers ?? []).map((s: Node) => s.url),
        ["{origin}/v1"],
      );
      assert.ok(d.servers[0].variables?.origin, "the server declares the {origin} variable");
    });

    test(`the interface description carries version 0.2.0 (${name} document)`, () => {
      assert.equal(d.info?.version, "0.2.0");
    });
  }
});

// ---------------------------------------------------------------------------

describe("Errors", () => {
  test("ErrorCode lists every error code of the document and the decisions (codes are append-only)", () => {
    const codes = literalValues(doc, doc.components?.schemas?.ErrorCode ?? {});
    assert.ok(codes, "components.schemas.ErrorCode is an enum");
    assert.deepEqual(
      ALL_ERROR_CODES.filter((c) => !codes.has(c)),
      [],
    );
    const unexplained = [...codes].filter((c) => !ALL_ERROR_CODES.includes(String(c)));
    assert.deepEqual(unexplained, [], "a new code needs its status in seed-surface.ts and a line in docs/decisions.md");
  });

  test("ErrorType has exactly the eight error types", () => {
    const errorTypes = literalValues(doc, doc.components?.schemas?.ErrorType ?? {});
    assert.ok(errorTypes, "components.schemas.ErrorType is an enum");
    assert.deepEqual(sorted(errorTypes), sorted(ERROR_TYPES));
  });

  test("every error response carries only the codes of its status and the decided error.type", () => {
    const violations: string[] = [];
    for (const o of operations(doc)) {
      for (const [status, response] of Object.entries(responses(doc, o.op))) {
        if (!/^[45]/.test(status)) continue;
        const where = `${label(o)} ${status}`;
        const allowedCodes = CODES_BY_STATUS[status];
        const decidedType = TYPE_BY_STATUS[status];
        if (allowedCodes === undefined || decidedType === undefined) {
          violations.push(`${where}: status has no decided codes and error.type (docs/contract-decisions.md, Errors)`);
          continue;
        }
        const body = contentSchema(doc, response);
        if (body === undefined) {
          violations.push(`${where}: no application/json error body`);
          continue;
        }
        if (!isRequired(doc, body, "error")) violations.push(`${where}: error is not required`);
        const detail = schemaAt(doc, body, "error");
        if (detail === undefined) {
          violations.push(`${where}: body has no error object`);
          continue;
        }
        for (const field of ["message", "type", "code"]) {
          if (!isRequired(doc, detail, field)) violations.push(`${where}: error.${field} is not required`);
        }
        if (schemaAt(doc, detail, "param") === undefined) violations.push(`${where}: no error.param`);
        const codes = literalValues(doc, schemaAt(doc, detail, "code") ?? {});
        if (codes === undefined) violations.push(`${where}: error.code is not an enum of codes`);
        else {
          for (const code of codes) {
            if (!allowedCodes.includes(String(code)))
              violations.push(`${where}: code ${code} does not belong to ${status}`);
          }
        }
        const errorTypes = literalValues(doc, schemaAt(doc, detail, "type") ?? {});
        if (errorTypes === undefined || errorTypes.size !== 1 || !errorTypes.has(decidedType)) {
          violations.push(
            `${where}: error.type is ${errorTypes ? sorted(errorTypes) : "open"}, expected exactly ${decidedType}`,
          );
        }
      }
    }
    assert.deepEqual(violations, []);
  });

  test("every error code that is sent is declared by some operation under its status", () => {
    const declared = new Map<string, Set<unknown>>();
    for (const o of operations(doc)) {
      for (const [status, response] of Object.entries(responses(doc, o.op))) {
        const body = contentSchema(doc, response);
        const code = body === undefined ? undefined : schemaAt(doc, body, "error.code");
        const codes = code === undefined ? undefined : literalValues(doc, code);
        for (const c of codes ?? []) {
          if (!declared.has(status)) declared.set(status, new Set());
          declared.get(status)?.add(c);
        }
      }
    }
    const undeclared = Object.entries(CODES_BY_STATUS).flatMap(([status, codes]) =>
      codes.filter((c) => !declared.get(status)?.has(c)).map((c) => `${status} ${c}`),
    );
    assert.deepEqual(undeclared, []);
    assert.deepEqual(
      UNSENT_CODES.filter((c) => [...declared.values()].some((set) => set.has(c))),
      [],
      "REQUEST_CANCELLED is logged, never sent",
    );
  });
});

describe("Error statuses of the operations", () => {
  test("POST /responses declares exactly the error statuses 400, 401, 402, 403, 404, 413, 429, 500, 503, 504", () => {
    assert.deepEqual(sorted(errorStatuses(operation(doc, "POST", "/responses"))), sorted(INFERENCE_ERROR_STATUSES));
  });

  test("every inference operation that generates declares the error statuses of POST /responses", () => {
    const violations = present(GENERATING_OPERATIONS).flatMap((o) =>
      INFERENCE_ERROR_STATUSES.filter((s) => !errorStatuses(o.op).includes(s)).map((s) => `${label(o)}: no ${s}`),
    );
    assert.deepEqual(violations, []);
  });

  test("every operation declares 400, 401, 403, 404, 429, 500 and 503", () => {
    const violations = operations(doc).flatMap((o) =>
      COMMON_ERROR_STATUSES.filter((s) => !errorStatuses(o.op).includes(s)).map((s) => `${label(o)}: no ${s}`),
    );
    assert.deepEqual(violations, []);
  });

  test("operations that can conflict declare 409 with their codes: job create, job cancel, dataset create", () => {
    const expectations: [ExpectedOperation, string[]][] = [
      ...JOB_COLLECTIONS.map(
        (c) => [jobPaths(c).create, ["IDEMPOTENCY_CONFLICT", "ALREADY_EXISTS"]] as [ExpectedOperation, string[]],
      ),
      ...JOB_COLLECTIONS.map((c) => [jobPaths(c).cancel, ["JOB_STATE_INVALID"]] as [ExpectedOperation, string[]]),
      [{ method: "POST", path: `${ACCOUNT}/datasets` }, ["ALREADY_EXISTS"]],
    ];
    const violations = expectations.flatMap(([e, codes]) => {
      const op = findOperation(doc, e.method, e.path);
      if (op === undefined) return [`${label(e)}: missing`];
      const conflict = responses(doc, op)["409"];
      if (conflict === undefined) return [`${label(e)}: no 409`];
      const body = contentSchema(doc, conflict);
      const declared = literalValues(doc, (body && schemaAt(doc, body, "error.code")) ?? {}) ?? new Set();
      return codes.filter((c) => !declared.has(c)).map((c) => `${label(e)}: 409 cannot carry ${c}`);
    });
    assert.deepEqual(violations, []);
  });
});

describe("Headers on responses", () => {
  test("every response, success or error, declares a required x-request-id string header", () => {
    const violations = operations(doc).flatMap((o) =>
      Object.entries(responses(doc, o.op)).flatMap(([status, response]) => {
        const h = header(doc, response, "x-request-id");
        if (h === undefined) return [`${label(o)} ${status}: no x-request-id`];
        if (h.required !== true) return [`${label(o)} ${status}: x-request-id is not required`];
        return types(doc, h.schema).has("string") ? [] : [`${label(o)} ${status}: x-request-id is not a string`];
      }),
    );
    assert.deepEqual(violations, []);
  });

  test("every 429 and 503 response declares Retry-After: an integer >= 0, in seconds", () => {
    const violations = operations(doc).flatMap((o) =>
      Object.entries(responses(doc, o.op))
        .filter(([status]) => status === "429" || status === "503")
        .flatMap(([status, response]) => {
          const where = `${label(o)} ${status}`;
          const h = header(doc, response, "Retry-After");
          if (h === undefined) return [`${where}: no Retry-After`];
          return [
            ...(h.required === true ? [] : [`${where}: Retry-After is not required`]),
            ...(sorted(types(doc, h.schema)).join() === "integer" ? [] : [`${where}: Retry-After is not an integer`]),
            ...expectKeyword(`${where} Retry-After`, h.schema, "minimum", 0),
          ];
        }),
    );
    assert.deepEqual(violations, []);
  });

  test("successful inference responses declare x-provider-class (primary or fallback) and x-config-version", () => {
    const violations = present(GENERATING_OPERATIONS).flatMap((o) =>
      successResponses(doc, o.op).flatMap(([status, response]) => {
        const where = `${label(o)} ${status}`;
        const providerClass = header(doc, response, "x-provider-class");
        const configVersion = header(doc, response, "x-config-version");
        const classes = providerClass && literalValues(doc, providerClass.schema);
        return [
          ...(providerClass?.required === true ? [] : [`${where}: no required x-provider-class`]),
          ...(classes && sorted(classes).join() === "fallback,primary"
            ? []
            : [`${where}: x-provider-class is not the enum primary, fallback`]),
          ...(configVersion?.required === true ? [] : [`${where}: no required x-config-version`]),
          ...(configVersion && types(doc, configVersion.schema).has("string")
            ? []
            : [`${where}: x-config-version is not a string`]),
        ];
      }),
    );
    assert.deepEqual(violations, []);
  });
});

// ---------------------------------------------------------------------------

describe("Limits", () => {
  test("account, job and dataset ids in paths are at most 64 characters", () => {
    const violations = operations(doc).flatMap((o) =>
      parameters(doc, o.path, o.op)
        .filter((p) => p.in === "path" && ["account", "job", "dataset"].includes(p.name))
        .flatMap((p) => expectKeyword(`${label(o)} {${p.name}}`, p.schema, "maxLength", 64)),
    );
    const idParams = operations(doc).filter((o) => /\{(account|job|dataset)\}/.test(o.path)).length;
    assert.ok(idParams > 0, "the document has operations with {account}, {job} or {dataset}");
    assert.deepEqual(violations, []);
  });

  test("baseModel, inputDatasetVersion and evaluationDatasetVersion are at most 256 characters", () => {
    const violations = JOB_COLLECTIONS.flatMap((c) =>
      [jobPaths(c).estimateCost, jobPaths(c).create].flatMap((e) => {
        if (findOperation(doc, e.method, e.path) === undefined) return [`${label(e)}: missing`];
        const body = requestJsonSchema(doc, e.method, e.path);
        return ["baseModel", "inputDatasetVersion", "evaluationDatasetVersion"].flatMap((f) =>
          expectKeyword(`${label(e)} ${f}`, schemaAt(doc, body, f), "maxLength", 256),
        );
      }),
    );
    assert.deepEqual(violations, []);
  });

  test("the list filter is at most 256 characters", () => {
    const jobLists = JOB_COLLECTIONS.map((c) => jobPaths(c).list);
    const violations = [
      ...jobLists.flatMap((e) => {
        const op = findOperation(doc, e.method, e.path);
        return op && parameter(doc, e.path, op, "query", "filter") ? [] : [`${label(e)}: no filter`];
      }),
      ...operations(doc).flatMap((o) => {
        const filter = parameter(doc, o.path, o.op, "query", "filter");
        return filter ? expectKeyword(`${label(o)} filter`, filter.schema, "maxLength", 256) : [];
      }),
    ];
    assert.deepEqual(violations, []);
  });

  test("Idempotency-Key is an optional header of at most 255 characters on job creation", () => {
    const violations = JOB_COLLECTIONS.map((c) => jobPaths(c).create).flatMap((e) => {
      const op = findOperation(doc, e.method, e.path);
      const key = op && parameter(doc, e.path, op, "header", "Idempotency-Key");
      if (key === undefined) return [`${label(e)}: no Idempotency-Key header`];
      return [
        ...(key.required === true ? [`${label(e)}: Idempotency-Key is required`] : []),
        ...expectKeyword(`${label(e)} Idempotency-Key`, key.schema, "maxLength", 255),
      ];
    });
    assert.deepEqual(violations, []);
  });

  test("list page size is 1 to 200, default 50, with a page token (job and dataset lists)", () => {
    const lists = [...JOB_COLLECTIONS.map((c) => jobPaths(c).list), { method: "GET", path: `${ACCOUNT}/datasets` }];
    const violations = lists.flatMap((e) => {
      const op = findOperation(doc, e.method, e.path);
      if (op === undefined) return [`${label(e)}: missing`];
      const pageSize = parameter(doc, e.path, op, "query", "pageSize");
      if (pageSize === undefined) return [`${label(e)}: no pageSize`];
      return [
        ...expectKeyword(`${label(e)} pageSize`, pageSize.schema, "minimum", 1),
        ...expectKeyword(`${label(e)} pageSize`, pageSize.schema, "maximum", 200),
        ...expectKeyword(`${label(e)} pageSize`, pageSize.schema, "default", 50),
        ...(sorted(types(doc, pageSize.schema)).join() === "integer"
          ? []
          : [`${label(e)}: pageSize is not an integer`]),
        ...(parameter(doc, e.path, op, "query", "pageToken") ? [] : [`${label(e)}: no pageToken`]),
      ];
    });
    assert.deepEqual(violations, []);
  });

  test("maxPoints of the training curve is 0 to 10000, default 1000", () => {
    const violations = JOB_COLLECTIONS.map((c) => jobPaths(c).metrics).flatMap((e) => {
      const op = findOperation(doc, e.method, e.path);
      const maxPoints = op && parameter(doc, e.path, op, "query", "maxPoints");
      if (maxPoints === undefined) return [`${label(e)}: no maxPoints`];
      return [
        ...expectKeyword(`${label(e)} maxPoints`, maxPoints.schema, "minimum", 0),
        ...expectKeyword(`${label(e)} maxPoints`, maxPoints.schema, "maximum", 10000),
        ...expectKeyword(`${label(e)} maxPoints`, maxPoints.schema, "default", 1000),
      ];
    });
    assert.deepEqual(violations, []);
  });

  test("config.epochs is 1 to 100 and config.evalAutoCarveoutBasisPoints is 0 to 9999", () => {
    const violations = JOB_COLLECTIONS.flatMap((c) =>
      [jobPaths(c).estimateCost, jobPaths(c).create].flatMap((e) => {
        if (findOperation(doc, e.method, e.path) === undefined) return [`${label(e)}: missing`];
        const body = requestJsonSchema(doc, e.method, e.path);
        const epochs = schemaAt(doc, body, "config.epochs");
        const carveout = schemaAt(doc, body, "config.evalAutoCarveoutBasisPoints");
        return [
          ...expectKeyword(`${label(e)} config.epochs`, epochs, "minimum", 1),
          ...expectKeyword(`${label(e)} config.epochs`, epochs, "maximum", 100),
          ...expectKeyword(`${label(e)} config.evalAutoCarveoutBasisPoints`, carveout, "minimum", 0),
          ...expectKeyword(`${label(e)} config.evalAutoCarveoutBasisPoints`, carveout, "maximum", 9999),
        ];
      }),
    );
    assert.deepEqual(violations, []);
  });

  test("responses request: temperature 0 to 2, top_p 0 to 1, max_output_tokens at least 1", () => {
    const body = requestJsonSchema(doc, "POST", "/responses");
    assert.deepEqual(
      [
        ...expectKeyword("temperature", schemaAt(doc, body, "temperature"), "minimum", 0),
        ...expectKeyword("temperature", schemaAt(doc, body, "temperature"), "maximum", 2),
        ...expectKeyword("top_p", schemaAt(doc, body, "top_p"), "minimum", 0),
        ...expectKeyword("top_p", schemaAt(doc, body, "top_p"), "maximum", 1),
        ...expectKeyword("max_output_tokens", schemaAt(doc, body, "max_output_tokens"), "minimum", 1),
      ],
      [],
    );
  });

  test("responses request: store is required and can only be false (rule 1)", () => {
    const body = requestJsonSchema(doc, "POST", "/responses");
    assert.ok(isRequired(doc, body, "store"), "store is required");
    const store = schemaAt(doc, body, "store");
    assert.ok(store, "the request has store");
    assert.deepEqual(sorted(literalValues(doc, store) ?? ["(any boolean)"]), ["false"]);
  });

  test("responses request: model and input are required", () => {
    const body = requestJsonSchema(doc, "POST", "/responses");
    assert.deepEqual(
      ["model", "input"].filter((f) => !isRequired(doc, body, f)),
      [],
    );
  });
});

// ---------------------------------------------------------------------------

describe("64-bit integers are carried as strings", () => {
  const cases: [string, ExpectedOperation, string[]][] = [
    [
      "Dataset (full view)",
      { method: "GET", path: `${ACCOUNT}/datasets/{dataset}` },
      [
        "totalBytes",
        "versions[].bytes",
        "versions[].exampleCount",
        "versions[].estimatedTokenCount",
        "versions[].validation.totalLines",
        "versions[].validation.validLines",
      ],
    ],
    [
      "Dataset version",
      { method: "GET", path: `${ACCOUNT}/datasets/{dataset}/versions/{version}` },
      ["bytes", "exampleCount", "estimatedTokenCount", "validation.totalLines", "validation.validLines"],
    ],
    ...JOB_COLLECTIONS.flatMap((c): [string, ExpectedOperation, string[]][] => [
      [`training job (${c})`, jobPaths(c).get, ["progress.processedTokens"]],
      [
        `cost estimate (${c})`,
        jobPaths(c).estimateCost,
        ["estimate.exampleCount", "estimate.avgTokensPerExample", "estimate.tokensProcessed"],
      ],
      [`training curve (${c})`, jobPaths(c).metrics, ["points[].step", "totalPoints"]],
    ]),
  ];
  for (const [name, e, fields] of cases) {
    test(`${name}: ${fields.join(", ")} are strings`, () => {
      assert.deepEqual(fieldsOfType(label(e), successJsonSchema(doc, e.method, e.path), fields, ["string"]), []);
    });
  }

  test("decimal values are strings: loss, money amounts, learningRate and dpoBeta", () => {
    const violations = JOB_COLLECTIONS.flatMap((c) => {
      const { metrics, estimateCost, create } = jobPaths(c);
      const curve = successJsonSchema(doc, metrics.method, metrics.path);
      const estimate = successJsonSchema(doc, estimateCost.method, estimateCost.path);
      const body = requestJsonSchema(doc, create.method, create.path);
      return [
        ...fieldsOfType(label(metrics), curve, ["points[].loss"], ["string"]),
        ...fieldsOfType(
          label(estimateCost),
          estimate,
          ["estimate.ratePerMillion.amount", "estimate.estimatedCost.amount"],
          ["string"],
        ),
        ...fieldsOfType(label(create), body, ["config.learningRate"], ["string"]),
        ...(c === "dpoJobs" ? fieldsOfType(label(create), body, ["config.dpoBeta"], ["string"]) : []),
      ];
    });
    assert.deepEqual(violations, []);
  });
});

// ---------------------------------------------------------------------------

const JOB_FIELDS = [
  "name",
  "jobId",
  "jobType",
  "state",
  "stateDetail",
  "errorClass",
  "baseModel",
  "inputDatasetVersion",
  "evaluationDatasetVersion",
  "outputModel",
  "config",
  "progress",
  "progress.percent",
  "progress.epoch",
  "progress.totalEpochs",
  "progress.processedTokens",
  "estimatedCost",
  "execution",
  "createdBy",
  "createTime",
  "startTime",
  "completeTime",
];

const JOB_STATES = [
  "JOB_STATE_QUEUED",
  "JOB_STATE_RUNNING",
  "JOB_STATE_CHECKPOINTING",
  "JOB_STATE_FINALIZING",
  "JOB_STATE_SUCCEEDED",
  "JOB_STATE_FAILED",
  "JOB_STATE_CANCELLED",
  "JOB_STATE_EXPIRED",
];

/** The job schema of each job operation that returns one job or a page of jobs. */
function jobSchemas(): [string, Node][] {
  return JOB_COLLECTIONS.flatMap((c) => {
    const { create, get, cancel, list } = jobPaths(c);
    const one = [create, get, cancel].map((e): [string, Node] => [label(e), successJsonSchema(doc, e.method, e.path)]);
    const page = schemaAt(doc, successJsonSchema(doc, list.method, list.path), `${c}[]`);
    return [...one, [`${label(list)} ${c}[]`, page] as [string, Node]];
  });
}

function checkDateTimes(where: string, schema: Node, fields: string[]): string[] {
  return fields.flatMap((f) => {
    const s = schemaAt(doc, schema, f);
    return s !== undefined && keyword(doc, s, "format") === "date-time"
      ? []
      : [`${where}: ${f} is not a date-time string`];
  });
}

describe("Resources and their fields", () => {
  test("the Response object has id, object, status, model, output, usage, store and incomplete_details", () => {
    const response = successJsonSchema(doc, "POST", "/responses");
    assert.deepEqual(
      [
        ...missingFields("Response", response, [
          "id",
          "object",
          "status",
          "model",
          "output",
          "usage",
          "store",
          "incomplete_details",
          "incomplete_details.reason",
        ]),
        ...admitsValues("Response", response, "object", ["response"]),
        ...admitsValues("Response", response, "status", ["completed", "incomplete", "in_progress"]),
        ...admitsValues("Response", response, "incomplete_details.reason", ["max_output_tokens"]),
      ],
      [],
    );
    assert.deepEqual(
      sorted(literalValues(doc, schemaAt(doc, response, "store")) ?? ["(any boolean)"]),
      ["false"],
      "store is always false",
    );
  });

  test("output items are message, function_call or reasoning with the seed's fields", () => {
    const item = schemaAt(doc, successJsonSchema(doc, "POST", "/responses"), "output[]");
    assert.ok(item, "Response.output is an array of items");
    const fields = ["id", "type", "role", "status", "content", "call_id", "name", "arguments", "summary"];
    const names = propertyNames(doc, item);
    assert.deepEqual(
      fields.filter((f) => !names.has(f)),
      [],
      "output item fields",
    );
    assert.deepEqual(
      [
        ...admitsValues("output item", item, "type", ["message", "function_call", "reasoning"]),
        ...admitsValues("output item", item, "status", ["completed", "in_progress"]),
        ...admitsValues("message content part", item, "content[].type", ["output_text"]),
        ...missingFields("message content part", item, ["content[].text"]),
      ],
      [],
    );
    const roles = schemasAt(doc, item, "role").map((s) => literalValues(doc, s) ?? ["(any string)"]);
    assert.deepEqual(sorted(new Set(roles.flatMap((r) => [...r]))), ["assistant"], "role is always assistant");
  });

  test("usage has input_tokens, output_tokens and total_tokens, integers >= 0", () => {
    const usage = schemaAt(doc, successJsonSchema(doc, "POST", "/responses"), "usage");
    assert.ok(usage, "Response.usage exists");
    const fields = ["input_tokens", "output_tokens", "total_tokens"];
    assert.deepEqual(
      [
        ...fieldsOfType("usage", usage, fields, ["integer"]),
        ...fields.flatMap((f) => expectKeyword(`usage.${f}`, schemaAt(doc, usage, f), "minimum", 0)),
      ],
      [],
    );
  });

  test("training jobs have the seed's fields wherever a job is returned (create, get, cancel, list)", () => {
    const violations = jobSchemas().flatMap(([where, job]) =>
      job === undefined
        ? [`${where}: no job schema`]
        : [
            ...missingFields(where, job, JOB_FIELDS),
            ...admitsValues(where, job, "state", JOB_STATES),
            ...fieldsOfType(where, job, ["progress.percent", "progress.epoch", "progress.totalEpochs"], ["integer"]),
            ...checkDateTimes(where, job, ["createTime", "startTime", "completeTime"]),
          ],
    );
    assert.deepEqual(violations, []);
  });

  test("jobType is JOB_TYPE_SFT or JOB_TYPE_DPO, and each collection can return its own type", () => {
    const violations = JOB_COLLECTIONS.flatMap((c) => {
      const { get } = jobPaths(c);
      const jobType = literalValues(doc, schemaAt(doc, successJsonSchema(doc, get.method, get.path), "jobType") ?? {});
      if (jobType === undefined) return [`${label(get)}: jobType is not an enum`];
      const own = c === "dpoJobs" ? "JOB_TYPE_DPO" : "JOB_TYPE_SFT";
      return [
        ...[...jobType]
          .filter((t) => t !== "JOB_TYPE_SFT" && t !== "JOB_TYPE_DPO")
          .map((t) => `${label(get)}: unknown jobType ${t}`),
        ...(jobType.has(own) ? [] : [`${label(get)}: jobType cannot be ${own}`]),
      ];
    });
    assert.deepEqual(violations, []);
  });

  test("job lists return the collection's array of jobs and nextPageToken", () => {
    const violations = JOB_COLLECTIONS.flatMap((c) => {
      const { list } = jobPaths(c);
      const page = successJsonSchema(doc, list.method, list.path);
      return [
        ...missingFields(label(list), page, [`${c}[]`, "nextPageToken"]),
        ...fieldsOfType(label(list), page, ["nextPageToken"], ["string"]),
      ];
    });
    assert.deepEqual(violations, []);
  });

  test("datasets have the seed's fields, states and sources", () => {
    const e = { method: "GET", path: `${ACCOUNT}/datasets/{dataset}` };
    const dataset = successJsonSchema(doc, e.method, e.path);
    const where = label(e);
    assert.deepEqual(
      [
        ...missingFields(where, dataset, [
          "name",
          "datasetId",
          "displayName",
          "source",
          "state",
          "latestVersionNo",
          "totalBytes",
          "createTime",
          "updateTime",
          "versions[]",
        ]),
        ...fieldsOfType(where, dataset, ["latestVersionNo"], ["integer"]),
        ...checkDateTimes(where, dataset, ["createTime", "updateTime"]),
        ...admitsValues(where, dataset, "source", [
          "DATASET_SOURCE_UPLOAD",
          "DATASET_SOURCE_JOB_OUTPUT",
          "DATASET_SOURCE_SPLIT",
        ]),
        ...admitsValues(where, dataset, "state", [
          "DATASET_STATE_CREATING",
          "DATASET_STATE_UPLOADING",
          "DATASET_STATE_VALIDATING",
          "DATASET_STATE_READY",
          "DATASET_STATE_FAILED",
          "DATASET_STATE_DELETED",
        ]),
      ],
      [],
    );
  });

  test("the dataset's view query is DATASET_VIEW_BASIC (default) or DATASET_VIEW_FULL", () => {
    const path = `${ACCOUNT}/datasets/{dataset}`;
    const view = parameter(doc, path, operation(doc, "GET", path), "query", "view");
    assert.ok(view, "GET dataset has a view query parameter");
    assert.deepEqual(sorted(literalValues(doc, view.schema) ?? []), ["DATASET_VIEW_BASIC", "DATASET_VIEW_FULL"]);
    assert.notEqual(view.required, true, "view is optional");
  });

  test("dataset versions have the seed's fields", () => {
    const e = { method: "GET", path: `${ACCOUNT}/datasets/{dataset}/versions/{version}` };
    const version = successJsonSchema(doc, e.method, e.path);
    const where = label(e);
    assert.deepEqual(
      [
        ...missingFields(where, version, [
          "name",
          "versionNo",
          "bytes",
          "exampleCount",
          "estimatedTokenCount",
          "state",
          "validation",
          "topLevelKeys[]",
          "createTime",
        ]),
        ...fieldsOfType(where, version, ["versionNo"], ["integer"]),
        ...fieldsOfType(where, version, ["topLevelKeys[]"], ["string"]),
        ...admitsValues(where, version, "state", ["DATASET_VERSION_STATE_READY"]),
        ...checkDateTimes(where, version, ["createTime"]),
      ],
      [],
    );
  });

  test("the cost estimate result shows its working and the egress decision", () => {
    const fields = [
      "estimate.exampleCount",
      "estimate.avgTokensPerExample",
      "estimate.epochs",
      "estimate.tokensProcessed",
      "estimate.ratePerMillion.amount",
      "estimate.ratePerMillion.currency",
      "estimate.estimatedCost.amount",
      "estimate.estimatedCost.currency",
      "egress.allowed",
      "egress.execution.thirdParty",
      "egress.providerApproved",
      "egress.requiredAgreementVersion",
      "egress.acceptedAgreementVersion",
    ];
    const violations = JOB_COLLECTIONS.flatMap((c) => {
      const { estimateCost: e } = jobPaths(c);
      const result = successJsonSchema(doc, e.method, e.path);
      return [
        ...missingFields(label(e), result, fields),
        ...fieldsOfType(label(e), result, ["estimate.epochs"], ["integer"]),
        ...fieldsOfType(
          label(e),
          result,
          ["egress.allowed", "egress.execution.thirdParty", "egress.providerApproved"],
          ["boolean"],
        ),
      ];
    });
    assert.deepEqual(violations, []);
  });

  test("the training curve has points (step, epoch, loss, learningRate, time), totalPoints and complete", () => {
    const violations = JOB_COLLECTIONS.flatMap((c) => {
      const { metrics: e } = jobPaths(c);
      const curve = successJsonSchema(doc, e.method, e.path);
      return [
        ...missingFields(label(e), curve, [
          "points[].step",
          "points[].epoch",
          "points[].loss",
          "points[].learningRate",
          "points[].time",
          "totalPoints",
          "complete",
        ]),
        ...fieldsOfType(label(e), curve, ["points[].epoch"], ["integer"]),
        ...fieldsOfType(label(e), curve, ["points[].learningRate"], ["number"]),
        ...fieldsOfType(label(e), curve, ["complete"], ["boolean"]),
        ...checkDateTimes(label(e), curve, ["points[].time"]),
      ];
    });
    assert.deepEqual(violations, []);
  });

  test("the estimate and create bodies take baseModel, inputDatasetVersion and config (with outputModelId) as required", () => {
    const violations = JOB_COLLECTIONS.flatMap((c) =>
      [jobPaths(c).estimateCost, jobPaths(c).create].flatMap((e) => {
        if (findOperation(doc, e.method, e.path) === undefined) return [`${label(e)}: missing`];
        const body = requestJsonSchema(doc, e.method, e.path);
        const config = schemaAt(doc, body, "config");
        return [
          ...["baseModel", "inputDatasetVersion", "config"]
            .filter((f) => !isRequired(doc, body, f))
            .map((f) => `${label(e)}: ${f} is not required`),
          ...(config !== undefined && isRequired(doc, config, "outputModelId")
            ? []
            : [`${label(e)}: config.outputModelId is not required`]),
          ...missingFields(label(e), body, [
            "evaluationDatasetVersion",
            "config.loraRank",
            "config.learningRate",
            "config.epochs",
            "config.batchSize",
            "config.maxContextLength",
            "config.earlyStop",
            "config.evalAutoCarveoutBasisPoints",
            "config.lrSchedule",
            "config.warmupSteps",
          ]),
          ...admitsValues(label(e), body, "config.lrSchedule", ["constant", "cosine", "linear_decay"]),
        ];
      }),
    );
    assert.deepEqual(violations, []);
  });
});

// ---------------------------------------------------------------------------

describe("Unknown request parameters are ignored; answers are exact", () => {
  test("request bodies stay open: no schema reachable from a request body forbids unknown properties", () => {
    const violations: string[] = [];
    for (const o of operations(doc)) {
      const body = o.op.requestBody === undefined ? undefined : deref(doc, o.op.requestBody);
      for (const [mediaType, media] of Object.entries<Node>(body?.content ?? {})) {
        if (media.schema === undefined) continue;
        for (const { where, schema } of reachableSchemas(doc, media.schema)) {
          for (const k of ["additionalProperties", "unevaluatedProperties"]) {
            if (isFalseSchema(schema[k])) violations.push(`${label(o)} ${mediaType}: ${where} has ${k}: false`);
          }
        }
      }
    }
    assert.deepEqual(violations, []);
  });

  // The vendor formats (chat completions, completions, messages, models) are open by
  // decision (docs/decisions.md): those formats grow, so their answers may carry more.
  const VENDOR_FORMAT_PATHS = ["/chat/completions", "/completions", "/messages", "/models", "/models/{model}"];

  test("success response bodies of the service's own resources are closed: no undeclared property", () => {
    const own = operations(doc).filter((o) => !VENDOR_FORMAT_PATHS.includes(o.path));
    const violations = own.flatMap((o) =>
      successResponses(doc, o.op).flatMap(([status, response]) => {
        const schema = contentSchema(doc, response);
        return schema === undefined || isClosed(doc, schema) ? [] : [`${label(o)} ${status}: the body is open`];
      }),
    );
    assert.deepEqual(violations, []);
  });
});

// ---------------------------------------------------------------------------

/** The security schemes of one alternative of a security requirement, resolved. */
function schemes(requirement: Node): Node[] {
  return Object.keys(requirement).map((name) => doc.components?.securitySchemes?.[name] ?? { missing: name });
}
const isBearer = (s: Node): boolean => s.type === "http" && String(s.scheme).toLowerCase() === "bearer";
const isXApiKey = (s: Node): boolean =>
  s.type === "apiKey" && s.in === "header" && String(s.name).toLowerCase() === "x-api-key";
const effectiveSecurity = (op: Node): Node[] => op.security ?? doc.security ?? [];

describe("Authentication", () => {
  test("the global security requirement is Authorization: Bearer", () => {
    const requirements: Node[] = doc.security ?? [];
    assert.ok(requirements.length > 0, "the document declares a global security requirement");
    assert.ok(
      requirements.every((r) => Object.keys(r).length > 0 && schemes(r).every(isBearer)),
      `global security is Bearer only: ${JSON.stringify(requirements)}`,
    );
  });

  test("every operation accepts Bearer and none is anonymous", () => {
    const violations = operations(doc).flatMap((o) => {
      const requirements = effectiveSecurity(o.op);
      return [
        ...(requirements.some((r) => Object.keys(r).length === 1 && schemes(r).every(isBearer))
          ? []
          : [`${label(o)}: no Bearer`]),
        ...(requirements.some((r) => Object.keys(r).length === 0) ? [`${label(o)}: anonymous access allowed`] : []),
      ];
    });
    assert.deepEqual(violations, []);
  });

  test("POST /messages also accepts the key in header x-api-key", () => {
    const requirements = effectiveSecurity(operation(doc, "POST", "/messages"));
    assert.ok(
      requirements.some((r) => Object.keys(r).length === 1 && schemes(r).every(isXApiKey)),
      `POST /messages security: ${JSON.stringify(requirements)}`,
    );
  });

  test("no other operation accepts x-api-key", () => {
    const violations = operations(doc)
      .filter((o) => !(o.method === "POST" && o.path === "/messages"))
      .filter((o) => effectiveSecurity(o.op).some((r) => schemes(r).some(isXApiKey)))
      .map(label);
    assert.deepEqual(violations, []);
  });
});

// ---------------------------------------------------------------------------

/** The itemSchema of an operation's 200 text/event-stream in the 3.2 document. */
function itemSchemaOf(path: string): Node {
  const media = deref(doc32, operation(doc32, "POST", path).responses?.["200"])?.content?.["text/event-stream"];
  assert.ok(media?.itemSchema, `POST ${path} 200 text/event-stream has an itemSchema`);
  return deref(doc32, media.itemSchema);
}

/** The oneOf branches of an operation's itemSchema, resolved. */
function streamBranches(path: string): Node[] {
  const itemSchema = itemSchemaOf(path);
  const branches = itemSchema.oneOf ?? itemSchema.anyOf;
  assert.ok(Array.isArray(branches) && branches.length > 0, `POST ${path} itemSchema has oneOf branches`);
  return branches.map((b: Node) => deref(doc32, b));
}

const eventName = (branch: Node): unknown => branch.properties?.event?.const ?? branch.properties?.event?.enum?.[0];

/** The resolved JSON data schema of one event branch. */
const dataSchema = (branch: Node): Node => {
  const s = branch.properties?.data?.contentSchema;
  return s === undefined ? undefined : deref(doc32, s);
};

/** Violations of "data is an object whose `type` is the event's name" for each named branch. */
function typedByEventName(path: string, branches: Node[], requireSequenceNumber: boolean): string[] {
  return branches.flatMap((branch) => {
    const name = eventName(branch);
    const where = `POST ${path} event ${String(name)}`;
    const data = dataSchema(branch);
    if (data === undefined) return [`${where}: data has no contentSchema`];
    const violations: string[] = [];
    if (!types(doc32, data).has("object")) violations.push(`${where}: data is not an object`);
    const typeValues = literalValues(doc32, schemaAt(doc32, data, "type") ?? {});
    if (typeValues === undefined || typeValues.size !== 1 || !typeValues.has(name)) {
      violations.push(`${where}: data.type is ${typeValues ? sorted(typeValues) : "open"}, expected ${String(name)}`);
    }
    if (!isRequired(doc32, data, "type")) violations.push(`${where}: data.type is not required`);
    if (requireSequenceNumber) {
      const seq = schemaAt(doc32, data, "sequence_number");
      if (seq === undefined || !types(doc32, seq).has("integer"))
        violations.push(`${where}: no integer sequence_number`);
      if (!isRequired(doc32, data, "sequence_number")) violations.push(`${where}: sequence_number is not required`);
    }
    return violations;
  });
}

describe("Server-sent events (3.2 document)", () => {
  test("a streamed POST /responses has exactly the seed's events and the decided extras", () => {
    const names = streamBranches("/responses").map(eventName);
    assert.deepEqual(sorted(names), sorted(RESPONSE_STREAM_EVENTS));
  });

  test("each /responses event's data carries type equal to the event name and a required integer sequence_number", () => {
    assert.deepEqual(typedByEventName("/responses", streamBranches("/responses"), true), []);
  });

  test("response.created, response.in_progress and response.completed carry the response with status and usage", () => {
    const branches = streamBranches("/responses");
    const violations = ["response.created", "response.in_progress", "response.completed"].flatMap((name) => {
      const data = dataSchema(branches.find((b) => eventName(b) === name) ?? {});
      if (data === undefined) return [`${name}: missing`];
      return ["response.status", "response.usage", "response.store"]
        .filter((f) => schemaAt(doc32, data, f) === undefined)
        .map((f) => `${name}: no ${f}`);
    });
    assert.deepEqual(violations, []);
  });

  for (const [path, chunkObject] of [
    ["/chat/completions", "chat.completion.chunk"],
    ["/completions", "text_completion"],
  ] as const) {
    test(`a streamed POST ${path} sends unnamed ${chunkObject} chunks and ends with data [DONE]`, () => {
      const branches = streamBranches(path);
      // Seed rule 4 (a failure part-way is an error event) may add a named `error` branch.
      // An event without an `event:` line has the SSE default type `message`.
      const unnamed = (b: Node): boolean => eventName(b) === undefined || eventName(b) === "message";
      assert.deepEqual(
        branches.filter((b) => !unnamed(b) && eventName(b) !== "error").map(eventName),
        [],
        "chunks have no event name",
      );
      const chunk = branches
        .filter(unnamed)
        .map(dataSchema)
        .find((d) => d !== undefined);
      assert.ok(chunk, "an unnamed branch carries the JSON chunk as contentSchema");
      assert.deepEqual(sorted(literalValues(doc32, schemaAt(doc32, chunk, "object") ?? {}) ?? []), [chunkObject]);
      assert.ok(
        branches.some((b) => b.properties?.data?.const === "[DONE]"),
        "a terminal branch whose data is the literal [DONE]",
      );
    });
  }

  test("a streamed POST /messages has the decided events, each with an event name", () => {
    assert.deepEqual(sorted(streamBranches("/messages").map(eventName)), sorted(MESSAGES_STREAM_EVENTS));
  });

  test("each /messages event's data carries type equal to the event name", () => {
    assert.deepEqual(typedByEventName("/messages", streamBranches("/messages"), false), []);
  });
});

describe("Server-sent event items validate as an SSE parser yields them (3.2 itemSchema)", () => {
  // Items as the OpenAPI 3.2 SSE section models them: the parsed fields of one event, with
  // `data` a string and no `event` field when the event has no `event:` line.
  const cases: [string, { valid: Record<string, string>[]; invalid: Record<string, string>[] }][] = [
    [
      "/responses",
      {
        valid: [
          { event: "response.output_text.delta", data: '{"type":"response.output_text.delta"}' },
          { event: "error", data: '{"type":"error"}' },
        ],
        invalid: [{ event: "response.unknown", data: "{}" }, { data: "[DONE]" }],
      },
    ],
    [
      "/chat/completions",
      {
        valid: [{ data: '{"object":"chat.completion.chunk"}' }, { data: "[DONE]" }],
        invalid: [],
      },
    ],
    [
      "/completions",
      {
        valid: [{ data: '{"object":"text_completion"}' }, { data: "[DONE]" }],
        invalid: [],
      },
    ],
    [
      "/messages",
      {
        valid: [
          { event: "message_start", data: '{"type":"message_start"}' },
          { event: "ping", data: '{"type":"ping"}' },
        ],
        invalid: [{ event: "response.created", data: "{}" }],
      },
    ],
  ];
  for (const [path, { valid, invalid }] of cases) {
    test(`POST ${path}: each item selects exactly one itemSchema branch; unknown events are rejected`, () => {
      const validate = validatorFor(doc32, itemSchemaOf(path));
      const violations = [
        ...valid.flatMap((item) => validate(item).map((e) => `${JSON.stringify(item)} is rejected: ${e}`)),
        ...invalid.filter((item) => validate(item).length === 0).map((item) => `${JSON.stringify(item)} is accepted`),
      ];
      assert.deepEqual(violations, []);
    });
  }
});

describe("Datasets", () => {
  test("dataset create takes datasetId (1 to 64 characters) and a dataset object", () => {
    const body = requestJsonSchema(doc, "POST", `${ACCOUNT}/datasets`);
    assert.ok(isRequired(doc, body, "datasetId"), "datasetId is required");
    assert.deepEqual(
      [
        ...expectKeyword("datasetId", schemaAt(doc, body, "datasetId"), "maxLength", 64),
        ...missingFields("create dataset", body, ["dataset", "dataset.displayName"]),
      ],
      [],
    );
  });
});
