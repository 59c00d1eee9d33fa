// Runs under untransformed-msw/jest.config.js: msw cannot load there, and the error must say how to fix the config.
import { startParityEnvironment } from "../../../src";

test("startParityEnvironment names this package and the preset line instead of Jest's raw ESM error", async () => {
  const error = await startParityEnvironment().then(
    () => null,
    (reason: unknown) => reason as Error,
  );
  expect(error).toBeInstanceOf(Error); // this package's error, from the test's realm (Jest's own is from another)
  expect(error?.message).toMatch(/^jest-session-parity: startParityEnvironment\(\) starts the mock backend, which loads msw/);
  expect(error?.message).toContain('use `preset: "jest-session-parity"`');
  expect(error?.message).toContain("transformIgnorePatterns: sessionParity.transformIgnorePatterns");
  expect((error?.cause as Error).message).toMatch(/Must use import to load ES Module: .*node_modules/);
});
