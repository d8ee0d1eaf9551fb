/**
 * How much `conformance fuzz` catches on its own, with no golden transcript: for each fault of
 * the catalogue (conformance/faults/), the fault proxy in front of a correct reference server,
 * and the kit's fuzzer (both engines, bounded, only the profile: no reference hook) pointed at
 * the proxy. A fault is caught when it fired and the fuzzer reports a finding the proxy did not
 * make itself. First the same run through a pass-through proxy, which must find nothing.
 */
import { fuzz, type Finding, type FuzzResult } from "./index.ts";
import { startFaultProxy, type Fault } from "../faults/proxy.ts";
import type { Profile } from "../index.ts";

export interface FuzzFaultTarget {
  origin: string;
  profile: Profile;
}

export interface FuzzFaultResult {
  id: string;
  rule: string;
  caught: boolean;
  /** Messages the fault changed during the fuzz run. */
  hits: number;
  /** The rules of the findings that caught it. */
  caughtBy: string[];
  durationMs: number;
  error?: string;
}

export interface FuzzBudget {
  seed: number;
  requests: number;
  sequences: number;
}

export async function fuzzThroughProxy(
  target: FuzzFaultTarget,
  fault: Fault | undefined,
  budget: FuzzBudget,
): Promise<{ result: FuzzResult; hits: number }> {
  const proxy = await startFaultProxy({ upstream: target.origin, ...(fault ? { fault } : {}) });
  try {
    const profile = structuredClone(target.profile);
    profile.baseUrl = proxy.baseUrl;
    profile.origin = proxy.origin;
    // Every finding, no shrinking: the question is whether it is caught, and the proxy's own failures are set apart below.
    const result = await fuzz({
      profile,
      seed: budget.seed,
      requests: budget.requests,
      sequences: budget.sequences,
      maxCommands: 6,
      keepGoing: true,
      // The proxy answers malformed HTTP itself (node:http): only what reaches the fault is worth sending.
      wellFormed: true,
    });
    return { result, hits: proxy.hits };
  } finally {
    await proxy.close();
  }
}

export async function fuzzFaultMatrix(options: {
  main: FuzzFaultTarget;
  upstream?: FuzzFaultTarget;
  faults: Fault[];
  budget: FuzzBudget;
  onResult?: (result: FuzzFaultResult) => void;
}): Promise<{ clean: FuzzResult[]; results: FuzzFaultResult[] }> {
  const clean: FuzzResult[] = [];
  for (const target of [options.main, options.upstream]) {
    if (target) {
      const { result } = await fuzzThroughProxy(target, undefined, options.budget);
      clean.push({ ...result, findings: ofTheServer(result.findings) });
    }
  }
  const results: FuzzFaultResult[] = [];
  for (const fault of options.faults) {
    const target = fault.target === "upstream" ? options.upstream : options.main;
    if (!target) continue;
    const started = Date.now();
    let entry: FuzzFaultResult;
    try {
      const { result, hits } = await fuzzThroughProxy(target, fault, options.budget);
      const findings = ofTheServer(result.findings);
      entry = {
        id: fault.id,
        rule: fault.rule,
        // Caught: the fault changed something and the fuzzer found a problem the proxy itself did not make.
        caught: hits > 0 && findings.length > 0,
        hits,
        caughtBy: [...new Set(findings.map((f) => f.rule))],
        durationMs: Date.now() - started,
      };
    } catch (error) {
      entry = {
        id: fault.id,
        rule: fault.rule,
        caught: false,
        hits: 0,
        caughtBy: [],
        durationMs: Date.now() - started,
        error: (error as Error).message,
      };
    }
    results.push(entry);
    options.onResult?.(entry);
  }
  return { clean, results };
}

/**
 * Findings about the server behind the proxy: the proxy's own failures are left out (a fault
 * that reads bodies cannot walk JSON nested 10 000 deep and answers 502 `fault proxy: …`).
 */
export function ofTheServer(findings: Finding[]): Finding[] {
  return findings.filter((f) => !f.response?.body.startsWith("fault proxy:"));
}
