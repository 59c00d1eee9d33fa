// A planted session-server bug for the session-verify gate: a v2 policy that re-tokenizes each generated tool-call turn.
// It rebuilds the assistant text from the parsed message with JSON.stringify arguments, a realistic rewrite mistake.
import { createV2Policy, type AnyTrajectoryPolicy, type CompletedTurn, type TrajectoryPolicy, type V2Plan, type V2SessionState } from "../../src/server";

type LogprobEntry = [number, number, ...unknown[]];

/** The turn with its completion re-tokenized from the parsed message, the record's output ids rewritten to match. */
function retokenized(turn: CompletedTurn, encode: (text: string) => number[]): CompletedTurn {
  const calls = turn.assistantMessage.tool_calls ?? [];
  if (calls.length === 0) return turn;
  const content = typeof turn.assistantMessage.content === "string" ? turn.assistantMessage.content : "";
  const blocks = calls.map((call) => {
    const args = typeof call.function.arguments === "string" ? (JSON.parse(call.function.arguments) as unknown) : call.function.arguments;
    return `<tool_call>\n${JSON.stringify({ name: call.function.name, arguments: args })}\n</tool_call>`;
  });
  const ids = encode(`${content}\n${blocks.join("\n")}<|im_end|>`);
  const response = structuredClone(turn.record.response) as { choices: { meta_info: { output_token_logprobs: LogprobEntry[] } }[] };
  const original = response.choices[0].meta_info.output_token_logprobs;
  response.choices[0].meta_info.output_token_logprobs = ids.map((id, i) => {
    const like = original[Math.min(i, original.length - 1)];
    return [like[0], id, ...like.slice(2)] as LogprobEntry;
  });
  return { ...turn, completionIds: ids, record: { ...turn.record, response } };
}

/** A v2 policy that stores re-tokenized tool-call turns instead of the model's own ids. */
export function retokenizingV2Policy(): AnyTrajectoryPolicy {
  const base = createV2Policy();
  const planted: TrajectoryPolicy<V2SessionState, V2Plan> = {
    ...base,
    commit(state, plan, request, turn, ctx) {
      return base.commit(
        state,
        plan,
        request,
        retokenized(turn, (text) => ctx.tokenizer.encode(text)),
        ctx,
      );
    },
  };
  return planted;
}
