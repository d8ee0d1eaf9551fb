/**
 * Builds the publishable package: `dist/` (JavaScript and declarations, compiled by tsc
 * with client/tsconfig.build.json), `generated/`: the contract's values
 * (contract-values.js) and types (api.d.ts), and `common/`: the resource names the server
 * shares (resource-names.js), which the package imports as `../generated/…` and
 * `../common/…` just as the sources do from the repo (scripts/build-package.ts).
 *
 *   node client/scripts/build.ts [outDir]    # default: client/ itself (what `npm pack` ships)
 *
 * A build tool, not part of the package: the only Node-specific file under client/.
 */
import { copyFileSync } from "node:fs";
import path from "node:path";
import { compilePackage } from "../../scripts/build-package.ts";

const CLIENT = path.resolve(import.meta.dirname, "..");
const out = path.resolve(process.argv[2] ?? CLIENT);

compilePackage(CLIENT, out);
copyFileSync(path.join(CLIENT, "../LICENSE"), path.join(out, "LICENSE"));
console.log(`built ${path.relative(process.cwd(), out) || "."}/dist, generated/ and common/`);
