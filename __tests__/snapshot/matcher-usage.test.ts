// Bad input to toMatchBitwiseSnapshot: a value with no bit tree, bad options and .not throw a usage error before the
// runner's snapshot state is touched, so nothing is written, counted or marked as checked.
interface CountingState {
  added: number;
  matched: number;
  unmatched: number;
  updated: number;
  getUncheckedCount(): number;
}

const state = (): CountingState => (expect.getState() as unknown as { snapshotState: CountingState }).snapshotState;
const counts = (): number[] => [state().added, state().matched, state().unmatched, state().updated];

test("values with no bit tree and bad options are usage errors that leave the snapshot state untouched", () => {
  const before = counts();
  const cyclic: Record<string, unknown> = {};
  cyclic.loop = [cyclic];
  expect(() => expect({ payload: { at: new Date(0) } }).toMatchBitwiseSnapshot()).toThrow("value.payload.at: a Date has no bit tree to snapshot");
  expect(() => expect(cyclic).toMatchBitwiseSnapshot("cycle")).toThrow(
    "value.loop[0]: cyclic reference (the value contains itself); a cycle has no bit tree to snapshot",
  );
  expect(() => expect({ a: 1 }).toMatchBitwiseSnapshot("bad", { largeArrays: "full" } as never)).toThrow(
    'option largeArrays must be "digest" or "safetensors", got "full"',
  );
  expect(() => expect({ a: 1 }).toMatchBitwiseSnapshot({ tolerance: 0 } as never)).toThrow(
    'unknown toMatchBitwiseSnapshot option "tolerance"; known options: metadataProjection, largeArrays, maxDifferences',
  );
  expect(() => expect({ a: 1 }).not.toMatchBitwiseSnapshot()).toThrow("Snapshot matchers cannot be used with not");
  expect(counts()).toEqual(before);
  expect(state().getUncheckedCount()).toBe(0);
});
