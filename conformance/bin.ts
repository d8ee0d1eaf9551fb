#!/usr/bin/env node
/**
 * The packed kit's command (`npx @inference-toolkit/conformance`): checks the running Node
 * before loading anything else, since an older one may fail on the kit's code in ways
 * that say nothing useful (or hang), then runs cli.ts.
 */
import { nodeTooOld, MINIMUM_NODE } from "../common/node-version.ts";

if (nodeTooOld(process.versions.node)) {
  console.error(
    `conformance: Node ${process.versions.node} is too old; the kit needs Node >= ${MINIMUM_NODE} (its package.json engines). Run it with a newer node.`,
  );
  process.exit(2);
}
await import("./cli.ts");
