// What routing replay adds to an upstream chat body, as a pure step: return flags, and the additional-R3 offset
// with the original's stable-prefix rule (a prompt that rewrites held rows is refused with 500).
import { addAdditionR3Offset, addReplayFlags, SessionHttpError } from "../../src/server";

const ALL = { routedExperts: true, indexerTopk: true, additionR3: true };

test("flags are set only for what the options ask", () => {
  const body: Record<string, unknown> = {};
  addReplayFlags(body, { routedExperts: false, indexerTopk: true, additionR3: false });
  expect(body).toEqual({ return_indexer_topk: true });
});

// mirrors miles/rollout/session/core.py::SessionCore._maybe_request_addition_r3
test("the offset is len(checkpoint) - 1, and 0 for a first request", () => {
  const body: Record<string, unknown> = { return_routed_experts: true };
  addAdditionR3Offset(body, ALL, [1, 2, 3, 4], [1, 2, 3, 4, 198, 9]);
  expect(body.routed_experts_start_len).toBe(3);
  addAdditionR3Offset(body, ALL, [], [5, 6]);
  expect(body.routed_experts_start_len).toBe(0);
});

// mirrors miles/rollout/session/core.py::SessionCore._maybe_request_addition_r3 (a client asking itself counts too)
test("only when the body asks for routed experts and additional R3 is on", () => {
  const notAsked: Record<string, unknown> = {};
  addAdditionR3Offset(notAsked, ALL, [1, 2], [1, 2, 3]);
  expect("routed_experts_start_len" in notAsked).toBe(false);
  const off: Record<string, unknown> = { return_routed_experts: true };
  addAdditionR3Offset(off, { ...ALL, additionR3: false }, [1, 2], [1, 2, 3]);
  expect("routed_experts_start_len" in off).toBe(false);
});

// mirrors miles/rollout/session/core.py::SessionCore._maybe_request_addition_r3 (stable prefix assertion)
test("a prompt that does not keep the checkpoint's rows is refused with 500 and the body is left as it was", () => {
  const body: Record<string, unknown> = { return_routed_experts: true };
  let error: unknown;
  try {
    addAdditionR3Offset(body, ALL, [1, 2, 3, 4], [1, 2, 9, 4, 5]);
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(SessionHttpError);
  expect((error as SessionHttpError).status).toBe(500);
  expect((error as SessionHttpError).message).toBe("additional R3 requires 3 stable prefix tokens, got 2");
  expect(body).toEqual({ return_routed_experts: true });
});
