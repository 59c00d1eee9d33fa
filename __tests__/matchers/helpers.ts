// Small helpers shared by the matcher tests: NaN values with chosen payloads and ANSI-free failure messages.
// Not a test file itself (no .test.ts suffix).

/** A number whose float64 bits are exactly `bits`. */
export function fromFloat64Bits(bits: bigint): number {
  return new Float64Array(new BigUint64Array([bits]).buffer)[0];
}

/** The message of the error `run` throws, with terminal colours removed; fails the test if nothing is thrown. */
export function thrownMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    // eslint-disable-next-line no-control-regex -- the escape character is what is removed
    return (error as Error).message.replace(/\u001b\[[0-9;]*m/g, "");
  }
  throw new Error("expected the assertion to throw, but it passed");
}
