// Every session-parity matcher, gathered in one object that Jest's and Vitest's `expect.extend` accept. It gathers the
// matchers of three components (matchers, fuzz, snapshot), so it sits above them, with the entries that register it.
import { bitwiseEqualTo, notBitwiseEqualTo } from "../matchers/bitwise-equal-to";
import { toBeBitwiseEqual } from "../matchers/to-be-bitwise-equal";
import { toHaveAgenticParity } from "../fuzz/matcher";
import { registerBitTreeTextSerializer, type BitTreePlugin } from "../snapshot/snapshot-serializers";
import { toMatchBitwiseSnapshot } from "../snapshot/to-match-bitwise-snapshot";
import { toPassSessionVerifyGate } from "../matchers/session-verify-gate-matcher";
import {
  toBeWellFormedTrainingSample,
  toHaveRetryTopology,
  toHaveTrainingPayloadParity,
  toMatchAgentMetadata,
  toRoundTripToolCalls,
} from "../matchers/parity-matchers";

/** The package's matchers, keyed by name, ready for `expect.extend(sessionParityMatchers)`. */
export const sessionParityMatchers = {
  toBeBitwiseEqual,
  toHaveRetryTopology,
  toMatchAgentMetadata,
  toRoundTripToolCalls,
  toHaveTrainingPayloadParity,
  toMatchBitwiseSnapshot,
  toHaveAgenticParity,
  toBeWellFormedTrainingSample,
  toPassSessionVerifyGate,
};

/** Type of {@link sessionParityMatchers}. */
type SessionParityMatcherSet = typeof sessionParityMatchers;

/** Asymmetric matcher factories installed on `expect` (and their inverses on `expect.not`). */
export const sessionParityAsymmetricMatchers = {
  bitwiseEqualTo,
};

const inverseAsymmetricMatchers: Record<keyof typeof sessionParityAsymmetricMatchers, unknown> = {
  bitwiseEqualTo: notBitwiseEqualTo,
};

/** The part of Jest's (or Vitest's) `expect` that registration needs. */
export interface ExpectLike {
  /** Registers matchers (`expect.extend`). */
  extend(matchers: SessionParityMatcherSet): void;
  /** The inverse asymmetric matchers (`expect.not`), when the runner has them. */
  not?: object;
  /** Registers a snapshot serializer (`expect.addSnapshotSerializer`), when the runner has snapshots. */
  addSnapshotSerializer?: (plugin: BitTreePlugin) => void;
}

/**
 * Registers the matchers on an `expect` (`expect.extend`), installs the asymmetric factories
 * (`expect.bitwiseEqualTo`, `expect.not.bitwiseEqualTo`) and the serializer that writes toMatchBitwiseSnapshot's
 * text into the runner's snapshot files as is (it prints only the matcher's own values). Idempotent.
 */
export function registerSessionParityMatchers(expectLike: ExpectLike): void {
  expectLike.extend(sessionParityMatchers);
  registerBitTreeTextSerializer(expectLike);
  for (const [name, factory] of Object.entries(sessionParityAsymmetricMatchers)) {
    Object.defineProperty(expectLike, name, { value: factory, configurable: true, writable: true, enumerable: true });
  }
  if (expectLike.not !== undefined && expectLike.not !== null) {
    for (const [name, factory] of Object.entries(inverseAsymmetricMatchers)) {
      Object.defineProperty(expectLike.not, name, { value: factory, configurable: true, writable: true, enumerable: true });
    }
  }
}
