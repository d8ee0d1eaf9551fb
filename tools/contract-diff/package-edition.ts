/**
 * The contract diff as another team installs it (`@inference-toolkit/contract-diff`, its
 * `contract-diff` command): it compares two OpenAPI documents, files or `<rev>:<path>` read
 * from git. Building the TypeSpec contract of a revision (`--base <ref>`) needs this
 * repository's toolchain and is refused there in one line (cli.ts).
 */
import type { Edition } from "./cli.ts";

export const PACKAGE_USAGE = `Usage: npx contract-diff --base-openapi <file|rev:path> --head-openapi <file|rev:path> [options]

Compares two OpenAPI documents (3.0, 3.1 or 3.2; YAML or JSON; their relative $refs are
read too) and reports every change with its rule, level and whether it breaks clients or
implementations. Example, the working tree's document against main's:

  npx contract-diff --base-openapi main:openapi.yaml --head-openapi openapi.yaml

  --base-openapi <doc>    the base document: a file, or <rev>:<path> (path from the root of
                          the repository) read with every file it refers to from git
  --head-openapi <doc>    the same for the head
  --repo <dir>            the git repository of <rev>:<path> (default: the current directory's)
  --format <f>            text (default), markdown (a PR comment), json or github
                          (workflow annotations)
  --strict-query-params   the implementations reject unknown query parameters: removing one
                          breaks clients (ERR) instead of being ignored (WARN)
  --date <YYYY-MM-DD>     the day sunset dates (x-sunset) are judged against (default: today)
  --fail-on <level>       WARN (default: every breaking change fails) or ERR (oasdiff's looser
                          policy: only definite breaks fail, WARN ones are reported)
  --fail-for <who>        any (default), clients or implementations
  --ignore-file <file>    reviewed exceptions: YAML, \`ignore:\` a list of {rule, location,
                          reason} (default: none)
  --list-rules            print the rules (with --format) and exit
  -h, --help              this text

Exit status: 0 no failing change, 1 breaking changes found (by default any change breaking
for clients or implementations), 2 bad input (one line on stderr).
`;

export const PACKAGE_EDITION: Edition = { usage: PACKAGE_USAGE, buildsContract: false };
