/**
 * `GET /healthz` and `GET /readyz`, outside the versioned API (no /v1, not in the
 * contract), without authentication, for load balancers and orchestrators:
 *
 * - /healthz: 200 `{"status": "ok"}` while the process can answer at all (liveness).
 * - /readyz: 200 when this process should be sent traffic: the store answers and every
 *   migration this code knows is applied; 503 otherwise, and from the moment the process
 *   starts draining (SIGTERM), so that a balancer takes it out before it stops. The body
 *   says which check failed.
 *
 * Never cached: each call asks again.
 */
import express, { type Router } from "express";
import type { Store } from "../store/store.ts";
import type { StoreProbe } from "./store-probe.ts";

export interface ReadinessChecks {
  store: Store;
  probe: StoreProbe;
  /** True once the process is draining. */
  draining(): boolean;
}

export interface ReadinessReport {
  status: "ready" | "unavailable";
  checks: { store: string; migrations: string; draining: boolean };
}

/** The longest a check may take before it counts as failed (a store that hangs is not ready). */
const CHECK_TIMEOUT_MS = 2_000;

export function probesRouter(checks: ReadinessChecks): Router {
  const router = express.Router({ caseSensitive: true });
  router.get("/healthz", (_req, res) => {
    res.setHeader("cache-control", "no-store");
    res.json({ status: "ok" });
  });
  router.get("/readyz", async (_req, res) => {
    const report = await readiness(checks);
    res.setHeader("cache-control", "no-store");
    res.status(report.status === "ready" ? 200 : 503).json(report);
  });
  return router;
}

export async function readiness(checks: ReadinessChecks): Promise<ReadinessReport> {
  const [store, migrations] = await Promise.all([
    check(async () => {
      // Any cheap read through the server's own pool: it answers, or it does not.
      await checks.store.owners.alive("readiness-probe", new Date());
      return "ok";
    }),
    check(async () => {
      const pending = await checks.probe.pendingMigrations();
      return pending.length === 0 ? "ok" : `pending: ${pending.join(", ")}`;
    }),
  ]);
  const draining = checks.draining();
  const ready = store === "ok" && migrations === "ok" && !draining;
  return { status: ready ? "ready" : "unavailable", checks: { store, migrations, draining } };
}

/** The check's answer, or what went wrong (a message, never a connection string). */
async function check(run: () => Promise<string>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>(
    (resolve) => (timer = setTimeout(() => resolve("error: no answer in time"), CHECK_TIMEOUT_MS)),
  );
  try {
    return await Promise.race([run(), timeout]);
  } catch (error) {
    return `error: ${(error as Error).message}`;
  } finally {
    clearTimeout(timer);
  }
}
