// Checks the `milesRevision` option: which miles revision the refusal rules of v1 retries and the v2 view follow.
// One check shared by both policies and the server options, so every entry point names the same choices.
import { MILES_REVISIONS, type MilesRevision } from "./types";

/** The revision to follow (default `"3311"`); throws an Error naming the valid values for anything else. */
export function checkMilesRevision(value: unknown): MilesRevision {
  if (value === undefined) return "3311";
  if (!(MILES_REVISIONS as readonly unknown[]).includes(value)) {
    throw new Error(`milesRevision must be one of ${MILES_REVISIONS.map((name) => JSON.stringify(name)).join(", ")}, got ${JSON.stringify(value)}`);
  }
  return value as MilesRevision;
}
