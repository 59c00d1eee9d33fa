// Picks the trajectory policy for a server version: v1 (linear, src/server/v1) or v2 (tree, src/server/v2).
// The only place that knows both policies exist; the shell stays version-agnostic.
import type { HookSpec, SamplePicker, SamplePostprocessor } from "./v2/hook-types";
import type { AnyTrajectoryPolicy, PolicyLogger } from "./policy";
import type { SessionServerVersion } from "./types";
import { createV1Policy } from "./v1";

/** A v2 picker given as a function or a `"module/path#exportName"` string. */
export type SamplePickerOption = HookSpec<SamplePicker>;
/** A v2 post-processor given as a function or a `"module/path#exportName"` string. */
export type SamplePostprocessorOption = HookSpec<SamplePostprocessor>;

/** Options a policy may need at construction. */
export interface PolicyFactoryOptions {
  logger: PolicyLogger;
  samplePicker?: SamplePickerOption;
  samplePostprocessor?: SamplePostprocessorOption;
}

interface V2Module {
  createV2Policy?: (options: PolicyFactoryOptions) => AnyTrajectoryPolicy;
}

/** Builds the policy of `version`. Throws a clear Error when v2 is asked for but unavailable, or hooks are given to v1. */
export function createPolicy(version: SessionServerVersion, options: PolicyFactoryOptions): AnyTrajectoryPolicy {
  if (version === "v1") {
    if (options.samplePicker !== undefined || options.samplePostprocessor !== undefined) {
      throw new Error("samplePicker/samplePostprocessor are v2 options; the v1 server has no sample hooks");
    }
    return createV1Policy();
  }
  // v2 hook point: resolved lazily so the shell works before src/server/v2/index.ts exports createV2Policy.
  let mod: V2Module = {};
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    mod = require("./v2") as V2Module;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") throw error;
  }
  if (typeof mod.createV2Policy !== "function") {
    throw new Error("session server v2 is not available: src/server/v2 does not export createV2Policy yet");
  }
  return mod.createV2Policy(options);
}
