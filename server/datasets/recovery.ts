/**
 * Dataset work whose process died is settled, at start and then periodically (another
 * server process sharing the store may die while this one runs; owners.ts says how a
 * dead one is told, on this host and on others):
 * - an upload still being received was never acknowledged, so its version becomes FAILED
 *   and its partial file is removed;
 * - a version being validated is validated again, here.
 */
import type { VersionKey } from "../store/datasets.ts";
import type { Store } from "../store/store.ts";
import { removeFile } from "./files.ts";
import { ownerAlive } from "./owners.ts";
import type { ValidationRunner } from "./validation-runner.ts";

export const INTERRUPTED_UPLOAD =
  "the upload was interrupted (the server stopped before the whole file arrived); upload the file again";

export async function recoverDatasets(store: Store, runner: ValidationRunner, self: string): Promise<void> {
  for (const version of await store.datasets.versionsInState("DATASET_VERSION_STATE_UPLOADING", false)) {
    if (await ownerAlive(store, version.owner)) continue;
    await removeFile(store.datasets.versionFile(version));
    await store.datasets.failUpload(version, version.owner, INTERRUPTED_UPLOAD, new Date());
  }
  for (const version of await store.datasets.versionsInState("DATASET_VERSION_STATE_VALIDATING")) {
    await takeOverValidation(store, runner, self, version);
  }
}

/** Validates the version here when its owner is this service or has died; else leaves it to its owner. */
export async function takeOverValidation(
  store: Store,
  runner: ValidationRunner,
  self: string,
  version: VersionKey & { owner: string | null },
): Promise<void> {
  if (version.owner === self) return runner.schedule(version);
  if (await ownerAlive(store, version.owner)) return;
  if (await store.datasets.claimValidation(version, version.owner, self)) runner.schedule(version);
}
