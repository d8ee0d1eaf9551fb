/**
 * Type-level fixture: calls that must NOT compile. It is part of the repository's `tsc`
 * run, where every `@ts-expect-error` line must really be an error (an unused one fails
 * `tsc`); types.test.ts also compiles it with the directives removed and checks that each
 * marked line fails with the error code named in its directive. Never executed.
 */
import { createClient, ok, paginate, streamResponse, waitForJob, type TrainingJob } from "../../client/index.ts";

const client = createClient({ baseUrl: "http://127.0.0.1:8080/v1", apiKey: "sk-…" });

export async function requests(job: TrainingJob): Promise<void> {
  // The correct call compiles…
  await ok(
    client.POST("/responses", { body: { model: "tiny-chat", input: "Hi", store: false, max_output_tokens: 16 } }),
  );

  // @ts-expect-error TS2561 a misspelt field of the request body
  await ok(client.POST("/responses", { body: { model: "tiny-chat", inptu: "Hi", store: false } }));

  await ok(
    // @ts-expect-error TS2322 a field of the wrong type
    client.POST("/responses", { body: { model: "tiny-chat", input: "Hi", store: false, max_output_tokens: "16" } }),
  );

  // @ts-expect-error TS2322 store must be false (the contract's literal type)
  await ok(client.POST("/responses", { body: { model: "tiny-chat", input: "Hi", store: true } }));

  // @ts-expect-error TS2322 a required field is missing (input)
  await ok(client.POST("/responses", { body: { model: "tiny-chat", store: false } }));

  // @ts-expect-error TS2345 a path the contract does not have
  await client.GET("/responses/{id}", { params: { path: { id: "resp_1" } } });

  // @ts-expect-error TS2345 a method the path does not have
  await client.GET("/responses", {});

  // @ts-expect-error TS2741 a required path parameter is missing (dataset)
  await client.GET("/accounts/{account}/datasets/{dataset}", { params: { path: { account: "acme" } } });

  // @ts-expect-error TS2561 a misspelt query parameter
  await client.GET("/accounts/{account}/datasets", { params: { path: { account: "acme" }, query: { pageSiz: 10 } } });

  await client.POST("/accounts/{account}/supervisedFineTuningJobs", {
    params: { path: { account: "acme" } },
    // @ts-expect-error TS2322 a training config field of the wrong type
    body: { baseModel: "tiny-chat", inputDatasetVersion: "d", config: { outputModelId: "m", epochs: "2" } },
  });

  await client.POST("/accounts/{account}/dpoJobs", {
    // @ts-expect-error TS2322 the Idempotency-Key header is a string
    params: { path: { account: "acme" }, header: { "Idempotency-Key": 42 } },
    body: { baseModel: "tiny-chat", inputDatasetVersion: "d", config: { outputModelId: "m" } },
  });

  const response = await ok(client.POST("/responses", { body: { model: "tiny-chat", input: "Hi", store: false } }));
  // @ts-expect-error TS2551 a misspelt field of the answer
  response.outputs;

  // @ts-expect-error TS2561 the stream helpers take the same typed body
  await streamResponse(client, { model: "tiny-chat", input: "Hi", store: false, temprature: 0 });

  for await (const event of await streamResponse(client, { model: "tiny-chat", input: "Hi", store: false })) {
    // @ts-expect-error TS2339 `delta` exists only once the event is narrowed to a delta event
    event.delta;
    if (event.type === "response.output_text.delta") event.delta.toUpperCase();
  }

  // @ts-expect-error TS2345 paging only takes list operations
  paginate(client, "/models", { params: { path: { account: "acme" } } });

  // @ts-expect-error TS2322 a state the contract does not have
  await waitForJob(client, job, { until: ["JOB_STATE_DONE"] });
}
