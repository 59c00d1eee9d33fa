// The `jest-session-parity/tokenizer` entry: real tokenizers and chat templates, the TITO model families, and TITO.
// Loading it loads the Hugging Face tokenizer and Jinja libraries; the package root never does.
import "./tokenizer-peers";
export {
  loadTokenizer,
  loadCheckpoint,
  defaultTokenizerDirectory,
  TokenizerLoadError,
  type LoadTokenizerOptions,
  type CheckpointFiles,
} from "../tokenizer/load";
export { Qwen3Tokenizer, QWEN3_IDS } from "../tokenizer/qwen3-tokenizer";
export { CheckpointTokenizer, type ChatTemplateRenderer } from "../tokenizer/checkpoint-tokenizer";
export { NativeChatTemplate, specialTokenVariables, type SpecialTokenVariables } from "../tokenizer/native-template";
export { qwen3ChatTemplate, ChatTemplate, ChatTemplateError, QWEN3_TEMPLATE_FILE, qwen3TemplatePath } from "../tokenizer/chat-template";
export {
  createTito,
  FamilyTito,
  Qwen3Tito,
  TitoError,
  QWEN3_TITO_APPEND_ROLES,
  QWEN3_PINNED_KWARGS,
  type TitoOptions,
  type TitoMessageMatcher,
} from "../tokenizer/tito";
export { TitoRenderCaches, sharedTitoRenderCaches } from "../tokenizer/tito-render-caches";
export { TitoPrefixCache } from "../tokenizer/tito-prefix-cache";
export { RenderedIdsMemo } from "../tokenizer/rendered-ids-memo";
export { loadTitoModel, type LoadedModel, type LoadTitoModelOptions } from "../tokenizer/family-load";
export {
  DEFAULT_FAMILY,
  DEFAULT_TITO_MODEL,
  getTitoFamily,
  MILES_TITO_MODELS,
  QWEN3_FAMILY,
  QWENNEXT_FAMILY,
  GLM47_FAMILY,
  GLM53_FAMILY,
  NEMOTRON3_FAMILY,
  KIMI25_FAMILY,
  KIMI26_FAMILY,
  MINIMAX_M25_FAMILY,
  MINIMAX_M27_FAMILY,
  INKLING_FAMILY,
  INKLING_MODEL_TYPES,
  titoFamilies,
  titoFamilyNames,
  TitoModelError,
  ALL_APPEND_ROLES,
  type AppendRole,
  type BoundaryRule,
  type BundledTemplateHelpers,
  type ComparatorSpec,
  type LoadedModelInfo,
  type ModelChoice,
  type SuffixRender,
  type TemplateSource,
  type TitoFamily,
  type TitoModelProblem,
  type TokenRef,
  type WireFormats,
} from "../tokenizer/families";
export { MismatchComparator, type TitoMismatchEntry, type TitoMismatchType, type MismatchComparatorOptions } from "../tokenizer/mismatch";
export type { ChatMessage, ChatTemplateKwargs, RenderOptions, Tokenizer, ToolCall, ToolSpec } from "../tokenizer/types";
export {
  verifyChatTemplate,
  loadTemplateVerifyPlan,
  TemplateVerifyLoadError,
  VERIFY_TRAJECTORIES,
  checkTextLayer,
  checkTitoLayer,
  type VerifyTemplateOptions,
  type TemplateVerifyPlan,
  type TemplateVerifyFamily,
  type TemplateRenderTarget,
  type FamilyRenderOptions,
  type VerifyTrajectory,
  type TemplateVerifyReport,
} from "../verify";
