/**
 * The reference server as the kit's fuzzer meets it in the tests and in `npm run fuzz`: the
 * whole server on the development seed (jobs accepted but never trained, so the fuzzer's
 * jobs stay queued), small upload and body limits (so bodies just over them are cheap), the
 * two accounts of conformance/profiles/reference.json without request limits and with money
 * to spend (limits are proven elsewhere; here they would only hide the handlers), and a tap
 * on the server's log: the reference hook that puts what the server logged beside each finding.
 */
import { loadProfile, type Profile } from "../../conformance/index.ts";
import { tapLog } from "../../server/log.ts";
import { startTestServer, type TestServer } from "../test-server.ts";
import { REFERENCE_PROFILE } from "../conformance-reference.ts";

export const MAX_UPLOAD_BYTES = 1024 * 1024;
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

export interface FuzzReference {
  server: TestServer;
  profile: Profile;
  serverLog: { clear(): void; lines(): string[] };
  close(): Promise<void>;
}

export async function startFuzzReference(): Promise<FuzzReference> {
  const server = await startTestServer({
    fineTuning: { runJobs: false },
    maxUploadBytes: MAX_UPLOAD_BYTES,
    maxBodyBytes: MAX_BODY_BYTES,
  });
  for (const account of ["acme", "globex"])
    await server.store.accounts.update(account, { requestsPerMinute: null, balanceMicros: 1e15, budgetMicros: null });
  const profile = loadProfile(REFERENCE_PROFILE, { baseUrl: server.baseUrl });
  profile.settings = { ...profile.settings, maxRequestBytes: MAX_BODY_BYTES };
  const logs = captureServerLog();
  return {
    server,
    profile,
    serverLog: logs,
    async close() {
      logs.restore();
      await server.close();
    },
  };
}

/**
 * The server logs failures on its log (server/log.ts, level warn and error) and a few with
 * console.error; keep what it says during each case. Access lines (info) are not kept.
 */
function captureServerLog(): { clear(): void; lines(): string[]; restore(): void } {
  const original = { error: console.error, warn: console.warn };
  let lines: string[] = [];
  const keep = (...args: unknown[]) => {
    lines.push(args.map((a) => (a instanceof Error ? (a.stack ?? a.message) : String(a))).join(" "));
    if (lines.length > 200) lines = lines.slice(-100);
  };
  console.error = keep;
  console.warn = keep;
  const untap = tapLog((line) => {
    if (!line.includes('"level":"info"') && !line.includes('"level":"debug"')) keep(line.replace(/\n$/, ""));
  });
  return {
    clear: () => (lines = []),
    lines: () => [...lines],
    restore: () => {
      untap();
      Object.assign(console, original);
    },
  };
}
