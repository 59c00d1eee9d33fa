// The shape every TITO model family declares: what miles' TITOTokenizer subclass and its FixedTemplate say.
// Pure data (plus token references resolved later against a vocabulary); the registry and loader give it life.
import type { ChatTemplateSource } from "./model-defaults";
import type { ChatTemplateKwargs } from "../types";

/** A role miles lets a family append after the stored history (`VALID_APPEND_ROLES` in tito_tokenizer.py). */
export type AppendRole = "tool" | "user" | "system" | "assistant";

/** Every role miles knows, in its order (`VALID_APPEND_ROLES`). */
export const ALL_APPEND_ROLES: readonly AppendRole[] = Object.freeze(["tool", "user", "system", "assistant"]);

/**
 * One token a family rule names, resolved against the checkpoint's vocabulary at start-up.
 * - `{token}`: a vocabulary entry by its spelling, as `tokenizer.convert_tokens_to_ids(token)` (e.g. `<|im_end|>`).
 * - `{text}`: text that must encode to exactly one id, as `tokenizer.encode(text, add_special_tokens=False)` with
 *   miles' `assert len(nl_ids) == 1` (Qwen3's newline).
 * - `{eos: true}`: the checkpoint's `eos_token` from tokenizer_config.json (the engine's stop token).
 * A reference the vocabulary cannot resolve refuses the start, naming the family, the file and the token, unless it is
 * `optional` (miles' `convert_tokens_to_ids` then gives None, which matches no id: the rule simply lacks it).
 */
export type TokenRef = { readonly token: string; readonly optional?: true } | { readonly text: string } | { readonly eos: true };

/**
 * Where a family's chat template comes from (miles' `FixedTemplate.template` plus `resolve_fixed_chat_template`).
 * - `checkpoint`: the checkpoint's own template, rendered in transformers' environment, found as transformers'
 *   `from_pretrained` finds it: `chat_template.jinja` beside tokenizer_config.json when present, else its
 *   `chat_template` (a string, or the entry named "default" / unnamed of a list). `FixedTemplate(template=None)`.
 * - `bundled`: a template this package ships (`FixedTemplate(template="...jinja")`); `file` is its name in
 *   `src/tokenizer/` (any `.jinja` there is copied into dist on build). Bundled templates may use the host helpers
 *   of {@link BundledTemplateHelpers}.
 * Either way, `--chat-template-path` replaces the template only for a family with `acceptsChatTemplatePath`
 * (miles: only `--tito-model=default`; a named family refuses it at start-up).
 */
export type TemplateSource =
  | { readonly kind: "checkpoint" }
  | {
      readonly kind: "bundled";
      readonly file: string;
      /**
       * True for a miles fixed template shipped unchanged (`miles-templates/*.jinja`): rendered as transformers
       * renders a checkpoint's own template (its special-token variables, Python's tojson and strip), not with the
       * host helpers of {@link BundledTemplateHelpers}.
       */
      readonly verbatim?: boolean;
    }
  | {
      /**
       * No Jinja: one of DeepSeek's official prompt encoders, ported (src/tokenizer/deepseek/), as miles routes a
       * checkpoint whose config.json declares that `model_type` (`chat_template_utils/deepseek.py`).
       */
      readonly kind: "encoder";
      readonly encoder: "deepseek_v32" | "deepseek_v4";
    };

/**
 * Variables our bundled templates may read (never passed to a checkpoint's template, whose variables are exactly
 * transformers'): `tito_strip_newlines(text, side)` (Python's `str.strip("\n")` family), `tito_tools_json[i]` and
 * `tool_call.function.tito_arguments_json` (the text Python's `tojson` writes for tools and tool-call arguments),
 * `tito_py_strip(text)` (Python's `str.strip()`), `tool_call.function.tito_argument_texts` (`[name, text]` per
 * argument in Python's order, the text as Jinja2 prints `tojson` for objects and lists, `str()` for the rest).
 */
export type BundledTemplateHelpers = "tito_strip_newlines" | "tito_py_strip" | "tito_tools_json" | "tito_arguments_json" | "tito_argument_texts";

/**
 * How the stored ids of the last turn meet the ids of the appended messages (`merge_tokens` of the family class),
 * and what the mismatch comparator strips from both tails (`trailing_token_ids`).
 */
export interface BoundaryRule {
  /**
   * When the stored ids end in one of `whenLastIs`, the ids of `append` go after them before the appended suffix
   * (Qwen3: the model stops at `<|im_end|>`, the template writes `<|im_end|>\n`, so "\n" is appended). Absent: none.
   */
  readonly appendAfter?: { readonly whenLastIs: readonly TokenRef[]; readonly append: readonly TokenRef[] };
  /**
   * When the stored ids end in one of these, that last id is dropped before the suffix (GLM 4.7: `<|user|>` and
   * `<|observation|>` are both stop tokens and the next turn's opener). Absent: nothing is dropped.
   */
  readonly dropLastWhen?: readonly TokenRef[];
  /** Ids the mismatch comparator strips from both sequence tails (`trailing_token_ids`; Qwen3: "\n"). */
  readonly trailing: readonly TokenRef[];
  /** Stored completion tokens a later turn may trim (`max_trim_tokens`; 0 for most families, 1 for GLM). */
  readonly maxTrimTokens: number;
}

/**
 * How the appended suffix is rendered (`tokenize_additional_messages`).
 * - `dummy-prefix`: miles' default: render `[dummy_system, dummy_assistant(stored tool calls)] + appended` with the
 *   generation prompt, minus the render of the two dummies; the cost depends on the appended messages only.
 * - `real-history`: render the real old and new message lists and diff them (DeepSeek V4, which folds adjacent
 *   tool/user turns); the cost grows with the history.
 */
export type SuffixRender = "dummy-prefix" | "real-history";

/** What the `tito_session_mismatch` comparator needs (`create_comparator` / `TokenSeqComparator`). */
export interface ComparatorSpec {
  /**
   * Decoded text that opens an assistant turn (`_default_assistant_start_str`, e.g. `<|im_start|>assistant`), or
   * null when the family sets none (miles' base class: every content difference is then `non_assistant_text`).
   */
  readonly assistantStart: string | null;
  /**
   * The ids that cut segments. `vocabulary`: every added token flagged special (`collect_special_ids`), less
   * `except` (Kimi drops `<|im_middle|>`); `only`: exactly these tokens (DeepSeek: `<｜User｜>`, `<｜Assistant｜>`).
   */
  readonly specialTokens:
    { readonly kind: "vocabulary"; readonly except?: readonly TokenRef[] } | { readonly kind: "only"; readonly tokens: readonly TokenRef[] };
}

/**
 * How the mock backend speaks for the family: the SGLang parsers miles binds (`reasoning_parser`,
 * `tool_call_parser` class attributes, `resolve_reasoning_and_tool_call_parser`) name both the text format the mock
 * writes its scripted tool calls and reasoning in and the parser that reads them back into `tool_calls` /
 * `reasoning_content`. The backend keeps one writer+parser per SGLang parser name (src/backend/formats).
 */
export interface WireFormats {
  /**
   * SGLang `--tool-call-parser` miles binds (`qwen25`, `qwen3_coder`, `glm47`, ...), or null when the family binds
   * none (`default`): the user's `--tool-call-parser` then chooses, and the mock falls back to `qwen25`.
   */
  readonly toolCallParser: string | null;
  /** SGLang `--reasoning-parser` miles binds (`qwen3`, `glm45`, `nemotron_3`, ...), or null (`default`). */
  readonly reasoningParser: string | null;
  /**
   * The parsers the mock speaks when the family binds none and the user names none: the ones SGLang serves the model
   * with (Kimi K2.5: `kimi_k2` for both; miles' Kimi25TITOTokenizer binds none). Absent: `qwen25` and no reasoning.
   */
  readonly unboundDefaults?: { readonly toolCallParser: string; readonly reasoningParser: string | null };
  /**
   * True when the generation prompt already opens the reasoning block (Qwen3-Thinking-2507 / Qwen3-Next write
   * `<|im_start|>assistant\n<think>\n`): a completion then starts inside it, so the mock writes
   * `reasoning</think>\n\ncontent` and the parser reads reasoning up to `</think>` without an opening tag.
   */
  readonly reasoningOpenedByPrompt: boolean;
  /**
   * A chat-template kwarg whose true value in the request forces the reasoning parser into reasoning mode (SGLang's
   * DeepSeek parsers read `chat_template_kwargs.thinking`; the prompt then ends in `<think>`). Absent: only
   * {@link reasoningOpenedByPrompt} decides.
   */
  readonly reasoningForcedByKwarg?: string;
  /**
   * The token the engine ends a finished turn with (appended to the mock's output ids). Absent: the checkpoint's
   * `eos_token` (Qwen3 `<|im_end|>`, Llama 3.1 `<|eot_id|>`, DeepSeek V3 `<｜end▁of▁sentence｜>`).
   */
  readonly stopToken?: TokenRef;
}

/**
 * One TITO model family (`--tito-model NAME`): everything miles' family class declares, as data. Families live one
 * per file under src/tokenizer/families/ and are listed in registry.ts.
 */
export interface TitoFamily {
  /** The `--tito-model` value (`TITOTokenizerType`), e.g. `"qwen3"`. */
  readonly name: string;
  /** miles' class for it (named in Python's kwarg-conflict text), e.g. `"Qwen3TITOTokenizer"`. */
  readonly pythonClass: string;
  /** One line for `--help` and the README families table. */
  readonly summary: string;
  /** Where the template comes from. */
  readonly template: TemplateSource;
  /** Whether `--chat-template-path` may replace the template (miles: `default` only). */
  readonly acceptsChatTemplatePath: boolean;
  /**
   * Kwargs the family fixes (`FixedTemplate.extra_kwargs`): merged over every layer; a server default or request
   * that sets a different value is refused with Python's text: `chat template kwarg KEY=VALUE!r conflicts with the
   * value registered for PYTHON_CLASS: PINNED!r` (a request gets it as a 400).
   */
  readonly pinnedKwargs: Readonly<ChatTemplateKwargs>;
  /**
   * Kwargs that mean the same thing (`chat_template_kwarg_aliases`): a layer that sets any of them replaces all of
   * them from the layers below (`merge_chat_template_kwargs(alias_keys=...)`). Empty for most families.
   */
  readonly kwargAliases: readonly string[];
  /** Roles a request may append (`FixedTemplate.allowed_append_roles`; miles' default is all four). */
  readonly allowedAppendRoles: readonly AppendRole[];
  /** How the appended suffix is rendered. */
  readonly suffixRender: SuffixRender;
  /** Boundary between the stored ids and the appended suffix, and the comparator's trailing ids. */
  readonly boundary: BoundaryRule;
  /** The mismatch comparator's configuration. */
  readonly comparator: ComparatorSpec;
  /** Parsers miles binds and how the mock writes and reads the family's replies. */
  readonly wire: WireFormats;
  /**
   * miles' DeepSeek classes: once the pinned kwargs are applied, `thinking` is set to whether the kwargs resolve to
   * thinking mode (`render_thinking_enabled`), so every upstream body names the mode SGLang's reasoning parser reads.
   */
  readonly setsThinkingKwarg?: boolean;
  /**
   * Tokens the vocabulary must hold beyond those the rules above name (which are always checked); a missing one
   * refuses the start naming the family, tokenizer.json and the token.
   */
  readonly requiredTokens: readonly TokenRef[];
}

/** The options that choose a model everywhere one is chosen (servers, mock, runs, fuzzing, the global setup). */
export interface ModelChoice {
  /** `--tito-model`: a registered family name (default `"qwen3"`). */
  titoModel?: string;
  /** `--hf-checkpoint`: a directory with tokenizer.json + tokenizer_config.json [+ chat_template.jinja] (default: the packaged Qwen3 files). */
  hfCheckpoint?: string;
  /** `--chat-template-path`: a Jinja file replacing the checkpoint's template (families with `acceptsChatTemplatePath` only). */
  chatTemplatePath?: string;
  /**
   * `--chat-template-kwargs` / miles' `--apply-chat-template-kwargs`: server default kwargs. A session server or a
   * fixture given none uses `{"enable_thinking": false}` (src/tokenizer/families/model-defaults.ts); the tokenizer
   * alone renders with `{}`.
   */
  chatTemplateKwargs?: ChatTemplateKwargs;
  /**
   * `--chat-template`: `family` (default) renders the family's registered template; `checkpoint` the checkpoint's own
   * template under the family's TITO rules (the configuration of miles' test helper `_serve_session`).
   */
  chatTemplate?: ChatTemplateSource;
}

/** What is wrong with a model choice; `missing` names the piece (a token, a template, a file). */
export type TitoModelProblem =
  | "unknown-family"
  | "missing-file"
  | "missing-token"
  | "missing-template"
  | "template-path-refused"
  | "bad-kwargs"
  | "bad-template-source"
  | "parser-mismatch"
  | "scenario-refused";

/**
 * A model choice that cannot start: unknown family, or a checkpoint that lacks what the family needs. The message
 * names the family, the file and the missing piece; the CLI exits 2 on it.
 */
export class TitoModelError extends Error {
  override readonly name = "TitoModelError";

  constructor(
    /** Which check failed. */
    readonly problem: TitoModelProblem,
    /** The family asked for. */
    readonly family: string,
    message: string,
    /** The file concerned (base name or checkpoint-relative), when there is one. */
    readonly file?: string,
  ) {
    super(message);
  }
}

/**
 * A model choice once started: the family, the checkpoint's tokenizer rendering the family's template, and where
 * each came from (reported by `/health`). Built by `loadTitoModel` (src/tokenizer/family-load.ts).
 */
export interface LoadedModelInfo {
  /** The family. */
  readonly family: TitoFamily;
  /** The checkpoint directory the vocabulary was read from (the packaged Qwen3 one when none was given). */
  readonly checkpoint: string;
  /** Where the template came from: the bundled file name, `tokenizer_config.json`, `chat_template.jinja`, or the --chat-template-path file. */
  readonly templateOrigin: string;
  /** Which template source is in force: `family` (registered), `checkpoint` (the checkpoint's own) or `path` (--chat-template-path). */
  readonly templateSource: ChatTemplateSource | "path";
}
