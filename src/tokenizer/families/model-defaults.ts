// The one place the defaults of a model choice are picked: the chat-template kwargs and template source that every
// entry point (serve, run/fuzz's embedded servers, the fixture, startParityEnvironment, startSessionServer, global setup) uses.
import type { ChatTemplateKwargs } from "../types";

/**
 * Server default chat-template kwargs when none are given: `{"enable_thinking": false}`, what the seed's test fixture
 * (`_serve_session`) and every parity capture of this package use. miles' own `--apply-chat-template-kwargs` defaults
 * to `{}` (thinking on for Qwen3); {@link MILES_KWARGS_FLAG} restores that (docs/PROTOCOL.md, "One default").
 */
export const DEFAULT_CHAT_TEMPLATE_KWARGS: Readonly<ChatTemplateKwargs> = Object.freeze({ enable_thinking: false });

/** The flag that gives a server miles' own default kwargs instead of {@link DEFAULT_CHAT_TEMPLATE_KWARGS}. */
export const MILES_KWARGS_FLAG = "--chat-template-kwargs '{}'";

/**
 * Where a server's chat template comes from:
 * - `family`: the template the family registers (Qwen3: the append-safe fixed template miles' argument parsing installs);
 * - `checkpoint`: the checkpoint's own (native) template under the family's TITO rules, what miles' test helper
 *   `_serve_session` runs (it builds its arguments directly: `tito_model="qwen3"`, `chat_template_path=None`).
 */
export type ChatTemplateSource = "family" | "checkpoint";

/** Every {@link ChatTemplateSource}, for flag choices and checks. */
export const CHAT_TEMPLATE_SOURCES: readonly ChatTemplateSource[] = Object.freeze(["family", "checkpoint"]);

/** The template source when none is given: the family's registered template (miles' production configuration). */
export const DEFAULT_CHAT_TEMPLATE_SOURCE: ChatTemplateSource = "family";

/** A fresh copy of {@link DEFAULT_CHAT_TEMPLATE_KWARGS}. */
export function defaultChatTemplateKwargs(): ChatTemplateKwargs {
  return { ...DEFAULT_CHAT_TEMPLATE_KWARGS };
}

/** `kwargs` when given (even `{}`), else the default. */
export function kwargsOrDefault(kwargs: ChatTemplateKwargs | undefined | null): ChatTemplateKwargs {
  return kwargs === undefined || kwargs === null ? defaultChatTemplateKwargs() : kwargs;
}

/** Checks a template source given by an option or a variable. */
export function checkChatTemplateSource(value: unknown, from: string): ChatTemplateSource {
  if (value === "family" || value === "checkpoint") return value;
  throw new Error(`${from} must be one of ${CHAT_TEMPLATE_SOURCES.join(", ")}, got ${JSON.stringify(value)}`);
}
