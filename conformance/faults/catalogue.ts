/**
 * The fault catalogue: each fault breaks exactly one rule of conformance/rules.yaml (its
 * `rule` is that rule's id), the way an implementation in the wild could get it wrong.
 * The faults live in catalogue/, one file per family of rules (the part of the id before
 * the first dot), and this registry lists the families in the order of rules.yaml.
 *
 * Where a fault changes the structure of a stream (drops, duplicates or moves an event) it
 * renumbers `sequence_number` afterwards, so that only the rule it targets is broken and a
 * kit cannot catch it by accident through another check.
 *
 * `areas` names the conformance kit's areas whose transcripts are meant to catch the fault
 * (the fault test runs only those, with stopOnFirstFailure).
 */
import { authFaults } from "./catalogue/auth.ts";
import { datasetFaults } from "./catalogue/datasets.ts";
import { errorFaults } from "./catalogue/errors.ts";
import { eventFaults } from "./catalogue/events.ts";
import { finetuneFaults } from "./catalogue/finetune.ts";
import { headerFaults } from "./catalogue/headers.ts";
import { inferenceFaults } from "./catalogue/inference.ts";
import { limitFaults } from "./catalogue/limits.ts";
import { responseFaults } from "./catalogue/responses.ts";
import { stateFaults } from "./catalogue/states.ts";
import { tenantFaults } from "./catalogue/tenant.ts";
import type { Fault } from "./proxy.ts";

/** The faults of each rule family: every fault here cites a rule whose id starts with `<family>.`. */
export const FAULTS_BY_FAMILY: Readonly<Record<string, readonly Fault[]>> = {
  headers: headerFaults,
  responses: responseFaults,
  states: stateFaults,
  events: eventFaults,
  errors: errorFaults,
  auth: authFaults,
  tenant: tenantFaults,
  inference: inferenceFaults,
  finetune: finetuneFaults,
  datasets: datasetFaults,
  limits: limitFaults,
};

export const FAULTS: Fault[] = Object.values(FAULTS_BY_FAMILY).flat();

export function faultById(id: string): Fault {
  const fault = FAULTS.find((f) => f.id === id);
  if (!fault) throw new Error(`no fault ${id}`);
  return fault;
}
