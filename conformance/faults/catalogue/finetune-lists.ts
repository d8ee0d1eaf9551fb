/**
 * Faults that break the `finetune.*` rules of conformance/rules.yaml (one of four files of the
 * family, see finetune.ts). The job and dataset lists: page size, page tokens, totals, order,
 * the state filter.
 */
import { listAt, objectAt, valueAt } from "../json.ts";
import { isOperation, collectionOf, JOB_OPERATIONS, LIST_OPERATIONS } from "../operations.ts";
import type { Fault } from "../proxy.ts";
import { jsonResponse, resend } from "./support.ts";

export const finetuneListFaults: Fault[] = [
  {
    id: "paging.page-size-ignored",
    areas: ["finetune", "datasets"],
    transcripts: ["datasets/list-paging"],
    rule: "finetune.paging",
    description: "pageSize is ignored: every page is as long as the default.",
    match: (request) => isOperation(request, ...LIST_OPERATIONS),
    onRequest(request) {
      if (!request.query.has("pageSize")) return;
      request.query.delete("pageSize");
      request.query.delete("pageToken");
      return request;
    },
  },
  {
    id: "paging.page-token-ignored",
    areas: ["finetune", "datasets"],
    transcripts: ["datasets/list-paging"],
    rule: "finetune.paging",
    description: "pageToken is ignored: every page is the first page again.",
    match: (request) => isOperation(request, ...LIST_OPERATIONS),
    onRequest(request) {
      if (!request.query.has("pageToken")) return;
      request.query.delete("pageToken");
      return request;
    },
  },
  {
    id: "paging.next-token-missing",
    areas: ["finetune", "datasets"],
    transcripts: ["datasets/list-paging"],
    rule: "finetune.list",
    description: 'nextPageToken is always "": a list stops after its first page.',
    match: (request) => isOperation(request, ...LIST_OPERATIONS),
    onResponse(response) {
      const page = objectAt(response.json);
      if (response.status !== 200 || !page?.nextPageToken) return;
      page.nextPageToken = "";
      return response;
    },
  },
  {
    id: "paging.total-size-is-page-length",
    areas: ["finetune", "datasets"],
    transcripts: ["datasets/list-paging"],
    rule: "finetune.paging",
    description: "totalSize counts the items of this page only.",
    match: (request) => isOperation(request, ...LIST_OPERATIONS),
    onResponse(response, request) {
      const page = objectAt(response.json);
      const items = listAt(page, collectionOf(request) ?? "");
      if (response.status !== 200 || !page || !items || page.totalSize === items.length) return;
      page.totalSize = items.length;
      return response;
    },
  },
  {
    id: "paging.oldest-first",
    areas: ["finetune"],
    transcripts: ["finetune/list-paging"],
    rule: "finetune.list",
    description: "Job list pages are in creation order (oldest first).",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.list),
    onResponse(response, request) {
      const items = listAt(response.json, collectionOf(request) ?? "");
      if (response.status !== 200 || !items || items.length < 2) return;
      items.reverse();
      return response;
    },
  },
  {
    id: "filter.ignored",
    areas: ["finetune", "datasets"],
    transcripts: ["limits/filter"],
    rule: "finetune.filter",
    description: "A valid filter is ignored: the list holds every state.",
    match: (request) => isOperation(request, ...LIST_OPERATIONS),
    async onRequest(request, ctx) {
      if (!request.query.has("filter")) return;
      const probe = await resend(ctx, request, { query: new URLSearchParams(request.query) });
      if (probe.status !== 200) return;
      request.query.delete("filter");
      request.query.delete("pageToken");
      return request;
    },
  },
  {
    id: "filter.full-state-name-rejected",
    areas: ["finetune", "datasets"],
    transcripts: ["datasets/list-filter"],
    rule: "finetune.filter",
    description: "A filter with the full enum value (state:JOB_STATE_…) is rejected with 400.",
    match: (request) =>
      isOperation(request, ...LIST_OPERATIONS) &&
      /^state:(JOB_STATE_|DATASET_STATE_)/.test(request.query.get("filter") ?? ""),
    respond() {
      return jsonResponse(400, {
        error: {
          message: "filter must be state:<STATE>, e.g. state:RUNNING.",
          type: "invalid_request_error",
          code: "INVALID_REQUEST",
          param: "filter",
        },
      });
    },
  },
  {
    id: "paging.token-not-bound",
    areas: ["limits", "finetune", "datasets"],
    transcripts: ["limits/page-token"],
    rule: "finetune.paging",
    description: "A page token sent with changed parameters is ignored and the first page is answered.",
    match: (request) => isOperation(request, ...LIST_OPERATIONS) && request.query.has("pageToken"),
    async onResponse(response, request, ctx) {
      if (response.status !== 400 || valueAt(response.json, "error", "param") !== "pageToken") return;
      const query = new URLSearchParams(request.query);
      query.delete("pageToken");
      const first = await resend(ctx, request, { query });
      return first.status === 200 ? first : undefined;
    },
  },
  {
    id: "filter.invalid-accepted",
    areas: ["finetune", "datasets"],
    transcripts: ["limits/filter"],
    rule: "finetune.filter",
    description: "An unparseable filter is ignored and the whole list returned.",
    match: (request) => isOperation(request, ...LIST_OPERATIONS),
    async onResponse(response, request, ctx) {
      if (
        !request.query.has("filter") ||
        response.status !== 400 ||
        valueAt(response.json, "error", "param") !== "filter"
      )
        return;
      const query = new URLSearchParams(request.query);
      query.delete("filter");
      const all = await resend(ctx, request, { query });
      return all.status === 200 ? all : undefined;
    },
  },
];
