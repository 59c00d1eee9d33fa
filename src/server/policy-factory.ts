// Picks the trajectory policy for a server version: v1 (linear, src/server/v1) or v2 (tree, src/server/v2).
// The only place that knows both policies exist; the shell stays version-agnostic.
import type { HookSpec, SamplePicker, SamplePostprocessor } from "./v2/hook-types";
import type { AnyTrajectoryPolicy, PolicyLogger } from "./policy";
import type { MilesRevision, SessionServerVersion } from "./types";
import { createV1Policy } from "./v1";
import { createV2Policy } from "./v2/policy";

/** A v2 picker given as a function or a `"module/path#exportName"` string. */
export type SamplePickerOption = HookSpec<SamplePicker>;
/** A v2 post-processor given as a function or a `"module/path#exportName"` string. */
export type SamplePostprocessorOption = HookSpec<SamplePostprocessor>;

/** Options a policy may need at construction. */
export interface PolicyFactoryOptions {
  logger: PolicyLogger;
  samplePicker?: SamplePickerOption;
  samplePostprocessor?: SamplePostprocessorOption;
  /** Which miles revision the refusal rules follow (default `"3311"`). */
  milesRevision?: MilesRevision;
}

/** Builds the policy of `version`. Throws a clear Error when hooks are given to v1 or a v2 hook cannot be loaded. */
export function createPolicy(version: SessionServerVersion, options: PolicyFactoryOptions): AnyTrajectoryPolicy {
  if (version === "v1") {
    if (options.samplePicker !== undefined || options.samplePostprocessor !== undefined) {
      throw new Error("samplePicker/samplePostprocessor are v2 options; the v1 server has no sample hooks");
    }
    return createV1Policy({ milesRevision: options.milesRevision });
  }
  return createV2Policy({ samplePicker: options.samplePicker, samplePostprocessor: options.samplePostprocessor, milesRevision: options.milesRevision });
}
