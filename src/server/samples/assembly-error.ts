// The one error sample assembly throws: the records cannot form a training sample (SPEC §7.3).
// The server maps it to 422 text/plain; the session stays intact and serving.

/** Records could not be turned into a sample (alignment, truncation or merge rule broken). */
export class SampleAssemblyError extends Error {
  override readonly name = "SampleAssemblyError";
}

/** Runs `fn`, turning any error it throws into a {@link SampleAssemblyError} with the same message. */
export function asAssemblyError<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof SampleAssemblyError) throw error;
    throw new SampleAssemblyError((error as Error)?.message ?? String(error));
  }
}
