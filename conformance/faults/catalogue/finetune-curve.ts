/**
 * Faults that break the `finetune.*` rules of conformance/rules.yaml (one of four files of the
 * family, see finetune.ts). The training curve: thinning to maxPoints, order, totalPoints, loss
 * as decimal text.
 */
import { listAt, objectAt, objectsOf } from "../json.ts";
import { isOperation, JOB_OPERATIONS } from "../operations.ts";
import type { Fault } from "../proxy.ts";
import { resend } from "./support.ts";

export const finetuneCurveFaults: Fault[] = [
  {
    id: "metrics.not-thinned",
    areas: ["finetune"],
    transcripts: ["limits/max-points"],
    rule: "finetune.metrics",
    description: "maxPoints is ignored: the whole curve comes back.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.metrics),
    onRequest(request) {
      if (!request.query.has("maxPoints")) return;
      request.query.delete("maxPoints");
      return request;
    },
  },
  {
    id: "metrics.truncated-not-thinned",
    areas: ["finetune"],
    transcripts: ["finetune/metrics"],
    rule: "finetune.metrics",
    description: "A curve over maxPoints is cut after maxPoints points instead of thinned (the last point is lost).",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.metrics),
    async onResponse(response, request, ctx) {
      const max = Number(request.query.get("maxPoints") ?? 1000);
      const curve = objectAt(response.json);
      if (response.status !== 200 || !Array.isArray(curve?.points) || !(max >= 2)) return;
      if (Number(curve.totalPoints) <= max) return;
      const query = new URLSearchParams(request.query);
      query.set("maxPoints", "10000");
      const full = await resend(ctx, request, { query });
      const points = listAt(full.json, "points");
      if (!points) return;
      curve.points = points.slice(0, max);
      return response;
    },
  },
  {
    id: "metrics.first-point-dropped",
    areas: ["finetune"],
    transcripts: ["finetune/metrics"],
    rule: "finetune.metrics",
    description: "A thinned curve loses its first point (the thinning starts one stride in).",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.metrics),
    onResponse(response) {
      const curve = objectAt(response.json);
      if (
        response.status !== 200 ||
        !Array.isArray(curve?.points) ||
        curve.points.length < 2 ||
        curve.points.length >= Number(curve.totalPoints)
      )
        return;
      curve.points.shift();
      return response;
    },
  },
  {
    id: "metrics.loss-as-number",
    areas: ["finetune"],
    transcripts: ["finetune/dpo"],
    rule: "finetune.metrics",
    description: "Each point's loss is a JSON number.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.metrics),
    onResponse(response) {
      const points = listAt(response.json, "points");
      if (response.status !== 200 || !points || points.length === 0) return;
      for (const point of objectsOf(points)) point.loss = Number(point.loss);
      return response;
    },
  },
  {
    id: "metrics.total-points-is-returned",
    areas: ["finetune"],
    transcripts: ["limits/max-points"],
    rule: "finetune.metrics",
    description: "totalPoints is the number of points in this (thinned) answer.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.metrics),
    onResponse(response) {
      const curve = objectAt(response.json);
      if (response.status !== 200 || !Array.isArray(curve?.points) || curve.totalPoints === String(curve.points.length))
        return;
      curve.totalPoints = String(curve.points.length);
      return response;
    },
  },
  {
    id: "metrics.newest-first",
    areas: ["finetune"],
    transcripts: ["finetune/metrics"],
    rule: "finetune.metrics",
    description: "Points come newest first.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.metrics),
    onResponse(response) {
      const points = listAt(response.json, "points");
      if (response.status !== 200 || !points || points.length < 2) return;
      points.reverse();
      return response;
    },
  },
  {
    id: "finetune.loss-with-exponent",
    areas: ["finetune"],
    transcripts: ["finetune/metrics"],
    rule: "finetune.metrics",
    description: "Losses are written as JavaScript prints numbers: 2.3e-7, 1e+21.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.metrics),
    onResponse(response) {
      const points = listAt(response.json, "points");
      if (response.status !== 200 || !points || points.length === 0) return;
      for (const point of objectsOf(points)) point.loss = Number(point.loss).toExponential();
      return response;
    },
  },
];
