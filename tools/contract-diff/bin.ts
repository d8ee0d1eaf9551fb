#!/usr/bin/env node
/**
 * The packed contract diff's command (`npx contract-diff`): checks the running Node before
 * loading anything else, since an older one may fail on the code in ways that say nothing
 * useful, then runs cli.ts in the package's edition (OpenAPI documents only).
 */
import { MINIMUM_NODE, nodeTooOld } from "../../common/node-version.ts";

if (nodeTooOld(process.versions.node)) {
  console.error(
    `contract-diff: Node ${process.versions.node} is too old; it needs Node >= ${MINIMUM_NODE} (its package.json engines). Run it with a newer node.`,
  );
  process.exit(2);
}
const [{ main }, { PACKAGE_EDITION }] = await Promise.all([import("./cli.ts"), import("./package-edition.ts")]);
main(PACKAGE_EDITION);
