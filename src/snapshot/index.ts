// Public surface of the snapshot component: toMatchBitwiseSnapshot's text format, serializers and helpers.
// The matcher itself is registered with the others by registerSessionParityMatchers.
export { LARGE_ARRAY_THRESHOLD, ArrayDigest } from "./array-digest";
export { serializeBitTree } from "./bit-tree-text";
export { parseBitTree, SnapshotTextError } from "./bit-tree-parse";
export { bitTreeSerializer } from "./snapshot-serializers";
export { toMatchBitwiseSnapshot, type BitwiseSnapshotOptions } from "./to-match-bitwise-snapshot";
export { trajectoryPayload, projectSessionMetadata, type PinnedTrajectory } from "./trajectory-snapshot";
