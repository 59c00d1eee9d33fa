// How the fuzz agent edits its history: initial messages, appends, tool results, retries and rewinds.
// Pure and shared by the live agent (with the replies it really got) and the model (with the replies it predicts).
import type { ChatMessage } from "../tokenizer/types";
import { FUZZ_TEXTS, pick, type AgentSchedule, type FuzzAction } from "./schedule";

/** One history message, flagged with the call that generated it (null: the agent wrote it). */
export interface HistoryEntry {
  message: ChatMessage;
  generatedBy: number | null;
}

/** The messages a schedule starts with. */
export function initialHistory(schedule: Pick<AgentSchedule, "fewShot">): HistoryEntry[] {
  const messages: ChatMessage[] = [{ role: "system", content: FUZZ_TEXTS.system }];
  if (schedule.fewShot) {
    messages.push({ role: "user", content: FUZZ_TEXTS.fewShotQuestion }, { role: "assistant", content: FUZZ_TEXTS.fewShotAnswer });
  }
  messages.push({ role: "user", content: FUZZ_TEXTS.question });
  return messages.map((message) => ({ message, generatedBy: null }));
}

/** The history after `action` (a new array; entries are shared). */
export function applyAction(history: readonly HistoryEntry[], action: FuzzAction): HistoryEntry[] {
  const out = [...history];
  const own = (message: ChatMessage): HistoryEntry => ({ message, generatedBy: null });
  switch (action.kind) {
    case "user":
      out.push(own({ role: "user", content: pick(FUZZ_TEXTS.users, action.variant) }));
      return out;
    case "system":
      out.push(own({ role: "system", content: pick(FUZZ_TEXTS.systems, action.variant) }));
      return out;
    case "assistant_input":
      out.push(
        own({ role: "assistant", content: pick(FUZZ_TEXTS.injected, action.variant) }),
        own({ role: "user", content: pick(FUZZ_TEXTS.users, action.variant) }),
      );
      return out;
    case "tool_results": {
      const last = out[out.length - 1];
      const calls = last !== undefined && last.generatedBy !== null ? (last.message.tool_calls ?? []) : [];
      if (calls.length === 0) {
        out.push(own({ role: "tool", tool_call_id: "none", content: FUZZ_TEXTS.noToolCall }));
        return out;
      }
      calls.forEach((call, i) => {
        const id = typeof call.id === "string" ? call.id : `call${i}`;
        out.push(own({ role: "tool", tool_call_id: id, content: pick(FUZZ_TEXTS.toolResults, action.variant + i) }));
      });
      return out;
    }
    case "retry": {
      const generated = out.flatMap((entry, i) => (entry.generatedBy !== null ? [i] : []));
      const depth = Math.min(Math.max(action.depth, 1), generated.length);
      const rewound = depth === 0 ? out : out.slice(0, generated[generated.length - depth]);
      if (!action.divergent) return rewound;
      for (let i = rewound.length - 1; i >= 0; i -= 1) {
        if (rewound[i].message.role === "user" && rewound[i].generatedBy === null) {
          rewound[i] = own({ role: "user", content: pick(FUZZ_TEXTS.rephrased, action.variant) });
          break;
        }
      }
      return rewound;
    }
  }
}

/** The request messages of a history. */
export function historyMessages(history: readonly HistoryEntry[]): ChatMessage[] {
  return history.map((entry) => entry.message);
}
