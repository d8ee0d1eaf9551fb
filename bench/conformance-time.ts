/**
 * Wall time of the whole conformance kit against the reference server (in this process,
 * as test/conformance/kit.slow.test.ts runs it), twice: the first run includes the JIT
 * warming up and the training of the fine-tuning transcripts' setup jobs.
 *
 *   node bench/conformance-time.ts
 */
import { runConformance } from "../conformance/index.ts";
import { startReferenceServer } from "../harness/conformance-reference.ts";

const reference = await startReferenceServer();
try {
  for (const run of ["first", "second"]) {
    const started = performance.now();
    const report = await runConformance({ profile: reference.profile });
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `  ${run} run: ${seconds.toFixed(1)} s — ${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped`,
    );
  }
} finally {
  await reference.close();
}
