// The `jest-session-parity/tokenizer` entry: Qwen3's real tokenizer and chat template, and TITO (token in, token out).
// Loading it loads the Hugging Face tokenizer and Jinja libraries; the package root never does.
export { loadTokenizer, defaultTokenizerDirectory, TokenizerLoadError, type LoadTokenizerOptions } from "../tokenizer/load";
export { Qwen3Tokenizer, QWEN3_IDS } from "../tokenizer/qwen3-tokenizer";
export { qwen3ChatTemplate, ChatTemplate, ChatTemplateError, QWEN3_TEMPLATE_FILE, qwen3TemplatePath } from "../tokenizer/chat-template";
export { createTito, Qwen3Tito, TitoError, QWEN3_TITO_APPEND_ROLES, QWEN3_PINNED_KWARGS, type TitoOptions, type TitoMessageMatcher } from "../tokenizer/tito";
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
