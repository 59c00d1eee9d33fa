// Public surface of the snapshot component: toMatchBitwiseSnapshot's text format, serializers and helpers.
// The matcher itself is registered with the others by registerSessionParityMatchers.
export { LARGE_ARRAY_THRESHOLD, ArrayDigest } from "./array-digest";
export { serializeBitTree, type BitTreeText, type BitTreeTextOptions, type LargeArrayStorage } from "./bit-tree-text";
export { parseBitTree, SnapshotTextError } from "./bit-tree-parse";
export { bitTreeSerializer, createBitTreeSerializer, type BitTreePlugin } from "./snapshot-serializers";
export { largeValuePath } from "./large-value-files";
export { sweepLargeValueFiles } from "./sweep";
export {
  createToMatchBitwiseSnapshot,
  jestSnapshotMatch,
  toMatchBitwiseSnapshot,
  type BitwiseSnapshotOptions,
  type RunnerSnapshotMatch,
  type RunnerSnapshotResult,
  type RunnerSnapshotState,
  type SnapshotMatcherContext,
} from "./to-match-bitwise-snapshot";
export { BitTreeSnapshotText } from "./snapshot-serializers";
export { trajectoryPayload, projectSessionMetadata, RUNTIME_TREE_NODE_KEYS, type PinnedTrajectory } from "./trajectory-snapshot";
