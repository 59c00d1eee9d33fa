// The `jest-session-parity/server` entry: the reference v1/v2 session servers and the seams for custom policies.
// Loading it loads the server code, undici and the tokenizer; the package root never does.
import "./server-peers";
export { startSessionServer, type SessionServerOptions, type RunningSessionServer, type SessionUsage } from "../server/session-server";
export { createPolicy, type PolicyFactoryOptions, type SamplePickerOption, type SamplePostprocessorOption } from "../server/policy-factory";
export type { AnyTrajectoryPolicy, MessageMatcher, PolicyContext, PolicyLogger, PreparedTurn, SessionView, TitoLike, TrajectoryPolicy } from "../server/policy";
export {
  MESSAGE_MATCHERS,
  looseToolCallMessageMatches,
  resolveMessageMatcher,
  roleContentOnlyMessageMatches,
  splitAssistantTurnMessageMatches,
  strictMessageMatches,
  type MessageMatcherName,
} from "../server/message-matchers";
export { createV1Policy, MAX_ROLLBACK_TURNS, type V1PolicyOptions } from "../server/v1";
export {
  createV2Policy,
  dropRetries,
  defaultPostprocess,
  SERVER_OWNED_METADATA_KEYS,
  MAX_TREE_NODES,
  ForestCapacityError,
  type V2PolicyOptions,
  type SampleHookContext,
  type SamplePicker,
  type SamplePostprocessor,
  type HookSpec,
  type TreeMetadata,
  type TreeNodeRow,
  type TreeLeafRow,
  type V2SessionMetadata,
} from "../server/v2";
export { ROUTING_KEY_HEADER } from "../server/upstream";
export {
  SessionHttpError,
  type CompletedTurn,
  type NormalizedChatRequest,
  type SamplesRequestBody,
  type SamplesFootprint,
  type SamplesResult,
  type SessionRecord,
  type SessionServerVersion,
  type MilesRevision,
  MILES_REVISIONS,
} from "../server/types";
export type { ModelChoice } from "../tokenizer/families/types";
