/**
 * Records the goldens of the `upstream` area, which need the misbehaving upstream of
 * reference.ts (`conformance record` records every other area against a plain reference
 * server):  node test/conformance/record-upstream.ts
 */
import path from "node:path";
import { GoldenWriter, kitRoot, runConformance, textReport } from "../../conformance/index.ts";
import { startUpstreamFaultServer } from "../../harness/conformance-reference.ts";

const ref = await startUpstreamFaultServer();
try {
  const writer = new GoldenWriter(path.join(kitRoot(), "goldens"));
  const report = await runConformance({
    profile: ref.profile,
    areas: ["upstream"],
    recorder: writer,
    runId: "rrecord0001",
    concurrency: 1,
  });
  const written = writer.write(
    report.details
      .filter((r) => r.status === "passed" && r.transcript.startsWith("upstream/"))
      .map((r) => r.transcript),
  );
  console.log(textReport(report));
  console.log(`Wrote ${written.length} goldens.`);
  process.exitCode = report.failed > 0 ? 1 : 0;
} finally {
  await ref.close();
}
