// Process functions known never to read their request argument (the ready-made scripts read only the prompt):
// for them the engine may hand over a repeated body's kept parse instead of a copy, as nothing can tell them apart.
import type { ProcessFunction } from "./types";

const requestBlind = new WeakSet<ProcessFunction>();

/** Marks a process function that never reads, keeps or changes its `request` argument; returns it. */
export function markRequestBlind<T extends ProcessFunction>(process: T): T {
  requestBlind.add(process);
  return process;
}

/** True for a function {@link markRequestBlind} marked (not for a wrapper around one: that may read the request). */
export function ignoresRequest(process: ProcessFunction): boolean {
  return requestBlind.has(process);
}
