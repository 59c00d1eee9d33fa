// Signatures of the two v2 samples-op hooks (picker, post-processor) and the context they receive.
// Kept apart from the defaults and the loader so user hook modules can import the types alone.
import type { Sample } from "../../wire/sample";
import type { PolicyLogger } from "../policy";
import type { V2SessionMetadata } from "./tree-metadata";

/** What the server hands every hook besides the samples and the session metadata. */
export interface SampleHookContext {
  /** Where hooks report warnings; the server's logger, which the user can silence. */
  logger: PolicyLogger;
}

/**
 * Chooses which raw leaf samples become training samples: a pure selection (drop and/or reorder) that must
 * return a duplicate-free subset of its input, the same objects, synchronously.
 */
export type SamplePicker = (samples: Sample[], sessionMetadata: V2SessionMetadata, context: SampleHookContext) => Sample[];

/**
 * Finalizes the picked samples (loss-mask ownership, metadata, reward), synchronously; it may edit the
 * samples in place and returns the samples to emit.
 */
export type SamplePostprocessor = (samples: Sample[], sessionMetadata: V2SessionMetadata, context: SampleHookContext) => Sample[];

/** A hook given either as a function or as a `"module/path#exportName"` string (resolved from the working directory). */
export type HookSpec<F> = F | string;
