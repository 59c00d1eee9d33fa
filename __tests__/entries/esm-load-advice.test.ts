// The advice of the ESM load error fits the project: a plain-JavaScript project without ts-jest is told to install
// the transform the preset uses (or to use the global hooks), one with ts-jest only to set the preset.
import { explainEsmLoadError } from "../../src/entries/esm-load-hint";

const mswEsmError = (): Error => new Error("Must use import to load ES Module: /project/node_modules/msw/lib/core/index.mjs");

function messageOf(run: () => never): string {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("explainEsmLoadError returned");
}

test("without ts-jest: install it (and TypeScript) before the preset, or use the global hooks", () => {
  const message = messageOf(() => explainEsmLoadError(mswEsmError(), "startParityEnvironment", () => false));
  expect(message).toContain(
    'Fix it in jest.config: install the transform it uses (npm i -D ts-jest@29 typescript@5; this project has no ts-jest), then use `preset: "jest-session-parity"`',
  );
  expect(message).toContain('globalSetup: "jest-session-parity/global-setup"');
});

test("with ts-jest: the preset line alone", () => {
  const message = messageOf(() => explainEsmLoadError(mswEsmError(), "startParityEnvironment", () => true));
  expect(message).toContain('Fix it in jest.config: use `preset: "jest-session-parity"`');
  expect(message).not.toContain("npm i -D ts-jest");
});

test("any other error passes through unchanged", () => {
  const other = new Error("connect ECONNREFUSED 127.0.0.1:9");
  expect(() => explainEsmLoadError(other, "startParityEnvironment", () => false)).toThrow(other);
});
