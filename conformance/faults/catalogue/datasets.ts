/**
 * Faults that break the `datasets.*` rules of conformance/rules.yaml. Datasets: create, upload,
 * validate, read (views, versions), list, delete.
 */
import { listAt, objectAt, stringAt, valueAt } from "../json.ts";
import { isOperation } from "../operations.ts";
import type { Fault } from "../proxy.ts";
import { errorCode, jsonResponse, replace, resend, datasetsOf, versionsOf, isInt64String } from "./support.ts";

export const datasetFaults: Fault[] = [
  {
    id: "datasets.deleted-listed",
    areas: ["datasets"],
    transcripts: ["datasets/list-paging"],
    rule: "datasets.list",
    description: "Deleted datasets stay in the unfiltered list.",
    match: (request) =>
      isOperation(request, "listDatasets") && !request.query.has("filter") && !request.query.has("pageToken"),
    async onResponse(response, request, ctx) {
      const items = listAt(response.json, "datasets");
      if (response.status !== 200 || !items) return;
      const query = new URLSearchParams(request.query);
      query.set("filter", "state:DELETED");
      const deleted = await resend(ctx, request, { query });
      const extra = listAt(deleted.json, "datasets") ?? [];
      if (extra.length === 0) return;
      items.push(...extra);
      return response;
    },
  },
  {
    id: "datasets.create-201",
    areas: ["datasets"],
    transcripts: ["limits/display-name"],
    rule: "datasets.create",
    description: "Dataset creation answers 201.",
    match: (request) => isOperation(request, "createDataset"),
    onResponse(response) {
      if (response.status !== 200) return;
      response.status = 201;
      return response;
    },
  },
  {
    id: "datasets.duplicate-id-accepted",
    areas: ["datasets"],
    transcripts: ["datasets/delete"],
    rule: "datasets.create",
    description: "Creating a dataset whose id exists returns the existing dataset (200).",
    match: (request) => isOperation(request, "createDataset"),
    async onResponse(response, request, ctx) {
      const datasetId = stringAt(request.json, "datasetId");
      if (errorCode(response) !== "ALREADY_EXISTS" || datasetId === undefined) return;
      const existing = await resend(ctx, request, {
        method: "GET",
        path: `${request.path}/${datasetId}`,
        body: Buffer.alloc(0),
        json: undefined,
      });
      return existing.status === 200 ? replace(response, 200, existing.json) : undefined;
    },
  },
  {
    id: "datasets.full-view-ignored",
    areas: ["datasets"],
    transcripts: ["datasets/validation-failed"],
    rule: "datasets.get",
    description: "The view parameter is ignored: the full view is the basic one.",
    match: (request) => isOperation(request, "getDataset"),
    onRequest(request) {
      if (request.query.get("view") !== "DATASET_VIEW_FULL") return;
      request.query.delete("view");
      return request;
    },
  },
  {
    id: "datasets.basic-view-has-versions",
    areas: ["datasets"],
    transcripts: ["datasets/delete"],
    rule: "datasets.get",
    description: "The default view includes versions and jobs, as if it were the full view.",
    match: (request) => isOperation(request, "getDataset"),
    onRequest(request) {
      const view = request.query.get("view");
      if (view !== null && view !== "DATASET_VIEW_BASIC") return;
      request.query.set("view", "DATASET_VIEW_FULL");
      return request;
    },
  },
  {
    id: "datasets.upload-version-reused",
    areas: ["datasets"],
    transcripts: ["datasets/form-upload"],
    rule: "datasets.upload",
    description: "Every upload answers as version 1 (a later upload overwrites the first version).",
    match: (request) => isOperation(request, "uploadDataset"),
    onResponse(response) {
      const version = objectAt(response.json);
      if (response.status !== 200 || typeof version?.versionNo !== "number" || version.versionNo === 1) return;
      version.versionNo = 1;
      version.name = String(version.name).replace(/\/versions\/\d+$/, "/versions/1");
      return response;
    },
  },
  {
    id: "datasets.delete-twice-not-found",
    areas: ["datasets"],
    transcripts: ["datasets/delete"],
    rule: "datasets.delete",
    description: "A second DELETE of a dataset answers 404 NOT_FOUND.",
    match: (request) => isOperation(request, "deleteDataset"),
    async onRequest(request, ctx) {
      const before = await resend(ctx, request, { method: "GET", body: Buffer.alloc(0), json: undefined });
      if (valueAt(before.json, "state") === "DATASET_STATE_DELETED") ctx.state.set(`gone:${request.path}`, true);
    },
    respond(request, ctx) {
      if (!ctx.state.get(`gone:${request.path}`)) return;
      return jsonResponse(404, {
        error: { message: "Dataset not found.", type: "not_found_error", code: "NOT_FOUND", param: null },
      });
    },
  },
  {
    id: "datasets.source-wrong",
    areas: ["datasets"],
    transcripts: ["datasets/lifecycle"],
    rule: "datasets.create",
    description: "Uploaded datasets say source DATASET_SOURCE_SPLIT.",
    onResponse(response) {
      const datasets = datasetsOf(response).filter((d) => d.source === "DATASET_SOURCE_UPLOAD");
      if (datasets.length === 0) return;
      for (const dataset of datasets) dataset.source = "DATASET_SOURCE_SPLIT";
      return response;
    },
  },
  {
    id: "datasets.ready-before-validation",
    areas: ["datasets"],
    transcripts: ["datasets/lifecycle"],
    rule: "datasets.validate-upload",
    description: "An upload answers its new version as DATASET_VERSION_STATE_READY at once.",
    match: (request) => isOperation(request, "uploadDataset"),
    onResponse(response) {
      const version = objectAt(response.json);
      if (response.status !== 200 || version?.state !== "DATASET_VERSION_STATE_UPLOADING") return;
      version.state = "DATASET_VERSION_STATE_READY";
      return response;
    },
  },
  {
    id: "datasets.display-name-dropped",
    areas: ["datasets"],
    transcripts: ["limits/display-name"],
    rule: "datasets.get",
    description: "displayName is always empty.",
    onResponse(response) {
      const datasets = datasetsOf(response).filter((d) => typeof d.displayName === "string" && d.displayName !== "");
      if (datasets.length === 0) return;
      for (const dataset of datasets) dataset.displayName = "";
      return response;
    },
  },
  {
    id: "datasets.preference-format-wrong",
    areas: ["datasets"],
    rule: "datasets.versions",
    description: "Preference datasets are reported as format SFT.",
    onResponse(response) {
      const versions = versionsOf(response).filter((version) => version.format === "PREFERENCE");
      if (versions.length === 0) return;
      for (const version of versions) version.format = "SFT";
      return response;
    },
  },
  {
    id: "datasets.int64-as-number",
    areas: ["datasets"],
    // A transcript that makes its own dataset: limits/filter lists the READY datasets earlier
    // runs happened to leave, and caught this only when there was one.
    transcripts: ["datasets/lifecycle"],
    rule: "datasets.get",
    description: "totalBytes is a JSON number.",
    onResponse(response) {
      const datasets = datasetsOf(response).filter((d) => isInt64String(d.totalBytes));
      if (datasets.length === 0) return;
      for (const dataset of datasets) dataset.totalBytes = Number(dataset.totalBytes);
      return response;
    },
  },
  {
    id: "datasets.latest-version-missing",
    areas: ["datasets"],
    // A transcript that makes its own dataset: limits/filter lists the READY datasets earlier
    // runs happened to leave, and caught this only when there was one.
    transcripts: ["datasets/lifecycle"],
    rule: "datasets.get",
    description: "Datasets are sent without latestVersionNo.",
    onResponse(response) {
      const datasets = datasetsOf(response).filter((d) => d.latestVersionNo !== undefined);
      if (datasets.length === 0) return;
      for (const dataset of datasets) delete dataset.latestVersionNo;
      return response;
    },
  },
  {
    id: "datasets.hard-delete",
    areas: ["datasets"],
    transcripts: ["datasets/delete"],
    rule: "datasets.delete",
    description: "A deleted dataset is gone: GET answers 404 NOT_FOUND.",
    match: (request) => isOperation(request, "getDataset", "deleteDataset"),
    onResponse(response, request, ctx) {
      if (request.method === "DELETE") {
        if (response.status === 200) ctx.state.set(`deleted:${request.path}`, true);
        return;
      }
      if (!ctx.state.has(`deleted:${request.path}`) || response.status !== 200) return;
      return replace(response, 404, {
        error: { message: "Dataset not found.", type: "not_found_error", code: "NOT_FOUND", param: null },
      });
    },
  },
  {
    id: "datasets.version-of-other-dataset",
    areas: ["datasets"],
    transcripts: ["datasets/lifecycle"],
    rule: "datasets.versions",
    description:
      "GET of a version answers with a version name missing its dataset segment (…/versions/{n} of the account).",
    match: (request) => isOperation(request, "getDatasetVersion"),
    onResponse(response) {
      const version = objectAt(response.json);
      if (response.status !== 200 || typeof version?.name !== "string") return;
      version.name = version.name.replace(/\/datasets\/[^/]+\//, "/datasets/");
      return response;
    },
  },
];
