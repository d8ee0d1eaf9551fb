/**
 * Builds the publishable package of the conformance kit:
 *
 *   node conformance/scripts/build.ts [outDir]    # default: conformance/ itself (what `npm pack` ships)
 *
 * `dist/` holds the JavaScript and declarations (tsc with conformance/tsconfig.build.json),
 * `common/` the Node version check its command starts with (common/node-version.ts);
 * `generated/` the contract's values the kit imports (contract-values.js, with api.d.ts for
 * its declarations: scripts/build-package.ts) and the contract it reads (openapi.3.2.yaml);
 * beside them, when building elsewhere than in place, the transcripts, goldens, fixtures,
 * profiles and rules.
 * Then `npx @inference-toolkit/conformance --base-url … --profile …` runs on plain Node.
 */
import { copyFileSync, cpSync } from "node:fs";
import path from "node:path";
import { compilePackage } from "../../scripts/build-package.ts";

const KIT = path.resolve(import.meta.dirname, "..");
const out = path.resolve(process.argv[2] ?? KIT);

compilePackage(KIT, out);
copyFileSync(path.join(KIT, "../LICENSE"), path.join(out, "LICENSE"));
copyFileSync(path.join(KIT, "../generated/openapi.3.2.yaml"), path.join(out, "generated/openapi.3.2.yaml"));
if (out !== KIT) {
  for (const dir of ["transcripts", "goldens", "fixtures", "profiles"])
    cpSync(path.join(KIT, dir), path.join(out, dir), { recursive: true });
  for (const file of ["rules.yaml", "README.md", "package.json"])
    copyFileSync(path.join(KIT, file), path.join(out, file));
}
console.log(`built ${path.relative(process.cwd(), out) || "."}/dist and generated/`);
