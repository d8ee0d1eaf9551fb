/**
 * How long a job's first checkpoint lasts at least on the development server (`npm start`
 * with the development seed): settings.checkpointingMs of conformance/profiles/reference.json,
 * so that the conformance kit's cancel-in-CHECKPOINTING transcript can see the state and send
 * its cancel within it. 2 s: at 500 ms a fresh-clone CI run, the whole suite beside it, missed
 * the window once. A hosted trainer's checkpoint takes seconds too.
 */
export const DEV_CHECKPOINT_HOLD_MS = 2_000;
