// The commit-time TITO invariant shared by v1 and v2: the stored ids must prefix the new prompt + completion.
// Up to max_trim_tokens trailing stored ids may differ (0 for Qwen3); a violation is a 500.
import { SessionHttpError } from "./types";

/**
 * Checks `stored[: len - maxTrimTokens]` is a prefix of `next`.
 * @throws SessionHttpError(500) naming the first mismatching index
 */
export function assertStoredPrefix(stored: readonly number[], next: readonly number[], maxTrimTokens: number): void {
  if (stored.length === 0) return;
  const checkLen = stored.length - maxTrimTokens;
  if (checkLen <= 0) return;
  let firstMismatch = -1;
  for (let i = 0; i < checkLen; i += 1) {
    if (i >= next.length || next[i] !== stored[i]) {
      firstMismatch = i;
      break;
    }
  }
  if (firstMismatch === -1) return;
  throw new SessionHttpError(
    500,
    `pretokenized prefix mismatch: stored ${stored.length} tokens (checking first ${checkLen}, allowing ${maxTrimTokens} trailing) ` +
      `are not a prefix of prompt_token_ids + completion_token_ids (${next.length} tokens), first mismatch at index ${firstMismatch}`,
  );
}
