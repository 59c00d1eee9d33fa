// Which vocabulary, template and wire formats the mock speaks: the model choice of the servers plus SGLang's
// parser flags, resolved as miles' resolve_reasoning_and_tool_call_parser resolves them.
import { loadTitoModel } from "../tokenizer/family-load";
import { getTitoFamily, DEFAULT_TITO_MODEL } from "../tokenizer/families/registry";
import type { ModelChoice, TitoFamily, TokenRef } from "../tokenizer/families/types";
import { TitoModelError } from "../tokenizer/families/types";
import type { Tokenizer } from "../tokenizer/types";
import { FALLBACK_TOOL_CALL_PARSER, reasoningFormat, toolCallFormat } from "./formats/registry";
import type { ReasoningFormat, ToolCallFormat } from "./formats/types";

/** The formats the mock writes and parses replies in (handed to process functions as `context.formats`). */
export interface MockFormats {
  /** How tool calls are written and parsed back. */
  toolCalls: ToolCallFormat;
  /** How reasoning is written and parsed back, or null when no reasoning parser is bound. */
  reasoning: ReasoningFormat | null;
  /** The generation prompt already opened the reasoning block (qwennext). */
  reasoningOpenedByPrompt: boolean;
  /**
   * The request chat-template kwarg whose true value forces the reasoning parser into reasoning mode (DeepSeek:
   * `thinking`, as SGLang's DeepSeek detectors read it); absent: only {@link reasoningOpenedByPrompt} decides.
   */
  reasoningForcedByKwarg?: string;
}

/** The mock's model choice: the servers' options plus SGLang's parser flags. */
export interface MockModelChoice extends ModelChoice {
  /** SGLang `--tool-call-parser`; must equal the family's bound parser when it binds one (default: that, else `qwen25`). */
  toolCallParser?: string;
  /** SGLang `--reasoning-parser`; must equal the family's bound parser when it binds one (default: that, else none). */
  reasoningParser?: string;
}

/** miles' `_resolve_one`: the user's value, the family's bound one, or a refusal when both are given and differ. */
function resolveParser(family: TitoFamily, flag: string, bound: string | null, user: string | undefined): string | null {
  if (user === undefined || user === "") return bound;
  if (bound === null || user === bound) return user;
  throw new TitoModelError(
    "parser-mismatch",
    family.name,
    `--${flag}=${JSON.stringify(user)} disagrees with the parser registered for tito_model=${JSON.stringify(family.name)}: ${JSON.stringify(bound)}. ` +
      `The parser is bound on the TITO subclass; either pass ${JSON.stringify(bound)} or omit the flag to auto-resolve.`,
  );
}

/**
 * The family and wire formats of a mock model choice (no I/O: the vocabulary is loaded separately).
 * @throws TitoModelError for an unknown family or a parser flag that contradicts the family's; Error for a parser
 * name the mock does not implement
 */
export function resolveMockFormats(choice: MockModelChoice): { family: TitoFamily; formats: MockFormats; stopToken: TokenRef } {
  const family = getTitoFamily(choice.titoModel ?? DEFAULT_TITO_MODEL);
  const fallback = family.wire.unboundDefaults;
  const toolName =
    resolveParser(family, "tool-call-parser", family.wire.toolCallParser, choice.toolCallParser) ?? fallback?.toolCallParser ?? FALLBACK_TOOL_CALL_PARSER;
  const reasoningName = resolveParser(family, "reasoning-parser", family.wire.reasoningParser, choice.reasoningParser) ?? fallback?.reasoningParser ?? null;
  const formats: MockFormats = {
    toolCalls: toolCallFormat(toolName),
    reasoning: reasoningName === null ? null : reasoningFormat(reasoningName),
    reasoningOpenedByPrompt: family.wire.reasoningOpenedByPrompt,
    ...(family.wire.reasoningForcedByKwarg === undefined ? {} : { reasoningForcedByKwarg: family.wire.reasoningForcedByKwarg }),
  };
  return { family, formats, stopToken: family.wire.stopToken ?? { eos: true } };
}

/** The id of the stop token in this vocabulary (`eos` falls back to `<|im_end|>` for tokenizers that name none). */
export function stopTokenId(tokenizer: Tokenizer, stopToken: TokenRef): number | undefined {
  if ("token" in stopToken) return tokenizer.tokenToId(stopToken.token);
  if ("text" in stopToken) {
    const ids = tokenizer.encode(stopToken.text);
    return ids.length === 1 ? ids[0] : undefined;
  }
  return tokenizer.tokenToId(tokenizer.eosToken ?? "<|im_end|>");
}

/** The family's tokenizer for the mock: the same checks and template as the session servers' (refusals are TitoModelError). */
export async function loadMockTokenizer(choice: MockModelChoice): Promise<Tokenizer> {
  const model = await loadTitoModel({
    titoModel: choice.titoModel,
    hfCheckpoint: choice.hfCheckpoint || undefined,
    chatTemplatePath: choice.chatTemplatePath,
    chatTemplate: choice.chatTemplate,
    chatTemplateKwargs: choice.chatTemplateKwargs,
  });
  return model.tokenizer;
}
