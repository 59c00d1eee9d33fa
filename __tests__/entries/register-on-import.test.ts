// `setupFilesAfterEnv: ["jest-session-parity"]` registers the matchers: loading the root under a runner whose global
// `expect` lacks them registers them once; where they are registered already, or no runner is there, it does nothing.
type FakeExpect = { extend: jest.Mock; not: object; toBeBitwiseEqual?: unknown };

/** Loads the module afresh with `candidate` as the global `expect`; returns what it registered. */
function loadWith(candidate: FakeExpect | undefined): void {
  const scope = globalThis as { expect?: unknown };
  const saved = scope.expect;
  scope.expect = candidate;
  try {
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a fresh evaluation of the module is the point
      require("../../src/entries/register-on-import");
    });
  } finally {
    scope.expect = saved;
  }
}

test("a runner's expect without the matchers gets every matcher and the asymmetric factories", () => {
  const fake: FakeExpect = { extend: jest.fn(), not: {} };
  loadWith(fake);
  expect(fake.extend).toHaveBeenCalledTimes(1);
  expect(Object.keys(fake.extend.mock.calls[0][0] as object)).toEqual(expect.arrayContaining(["toBeBitwiseEqual", "toHaveTrainingPayloadParity"]));
  expect(typeof (fake as unknown as { bitwiseEqualTo?: unknown }).bitwiseEqualTo).toBe("function");
});

test("an expect that has them already is left alone", () => {
  const fake: FakeExpect = { extend: jest.fn(), not: {}, toBeBitwiseEqual: () => ({}) };
  loadWith(fake);
  expect(fake.extend).not.toHaveBeenCalled();
});

test("outside a runner (no global expect) nothing happens", () => {
  expect(() => loadWith(undefined)).not.toThrow();
});
