// After a test file ran under the update flag, removes stored large-value files that no kept snapshot refers to.
// Reads the runner's snapshot state the way its own save step does: the data minus the keys it is about to drop.
import { removeUnreferencedLargeValues } from "./large-value-files";

/** The parts of Jest's or Vitest's snapshot state the sweep reads (`_snapshotData` is internal to both, read defensively). */
interface SweepableState {
  snapshotPath?: string;
  getUncheckedKeys?: () => string[];
  _snapshotData?: Record<string, string>;
  _updateSnapshot?: string;
  snapshotUpdateState?: string;
}

/**
 * Under the update flag (`-u`: Jest's `updateSnapshot: "all"`, Vitest's `"all"`), deletes the `.safetensors` files
 * beside the test file's snapshot file that no surviving snapshot names (rewritten, obsolete or removed ones).
 * Otherwise does nothing: without `-u` an obsolete snapshot and its file stay, and the runner reports the snapshot.
 * Call it from an `afterAll` of the test file (the package's setup entries do). Returns the removed paths.
 */
export function sweepLargeValueFiles(state: unknown): string[] {
  if (state === null || typeof state !== "object") return [];
  const s = state as SweepableState;
  const mode = s._updateSnapshot ?? s.snapshotUpdateState;
  if (mode !== "all" || s.snapshotPath === undefined || s._snapshotData === undefined || typeof s.getUncheckedKeys !== "function") return [];
  const dropped = new Set(s.getUncheckedKeys());
  const kept = Object.entries(s._snapshotData)
    .filter(([key]) => !dropped.has(key))
    .map(([, text]) => text);
  return removeUnreferencedLargeValues(s.snapshotPath, kept);
}
