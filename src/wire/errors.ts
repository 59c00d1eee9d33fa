// The documented error classes of the wire component, kept in one module so every codec layer throws the same types.
// Callers (fixture, server, fuzz tests) match on these classes; anything else escaping the codec is a bug.

/** A byte string that is not a valid safetensors container (the message names the broken rule). */
export class SafetensorsFormatError extends Error {
  override readonly name = "SafetensorsFormatError";
}

/**
 * A samples-op payload that breaks the samples contract (SPEC §7.4), or a sample the encoder refuses
 * to put on the wire (a value that would change on conversion, a wrong replay-tensor dtype, ...).
 */
export class SamplesCodecError extends Error {
  override readonly name: string = "SamplesCodecError";
}

/**
 * The driver's input sample already carries state that the samples overlay would silently replace
 * (`weight_versions`, `prefix_cache_info`, `spec_info`, teacher log-probs, ...). Thrown only for non-empty replies.
 */
export class InputSampleDefaultsError extends SamplesCodecError {
  override readonly name = "InputSampleDefaultsError";
}
