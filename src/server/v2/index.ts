// The v2 (tree) session server policy: trajectory forest, serving, samples op and its picker/post-processor hooks.
// The shell selects it for `version: "v2"` through src/server/policy-factory.ts.
export { MAX_TREE_NODES, ForestCapacityError, TrajectoryForest, TrajectoryNode } from "./forest";
export * from "./tree-metadata";
export * from "./hook-types";
export { dropRetries } from "./drop-retries";
export { defaultPostprocess, SERVER_OWNED_METADATA_KEYS } from "./default-postprocess";
export type { V2Plan, V2SessionState } from "./serving";
export { createV2Policy } from "./policy";
export type { V2PolicyOptions } from "./policy";
