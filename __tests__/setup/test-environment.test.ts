// The package's own Jest environment (jest.environment.ts): its context's global is an ordinary object, not Jest's
// tracking sandbox, and Jest's node globals and the worker's tokenizer store are installed on it as before.
import { describe, expect, it } from "@jest/globals";
import * as vm from "node:vm";
import SessionParityTestEnvironment from "../../jest.environment";
import { SHARED_TOKENIZER_FILES } from "../../src/tokenizer/shared-files";

type JestEnvironmentConfig = ConstructorParameters<typeof SessionParityTestEnvironment>[0];
type EnvironmentContext = ConstructorParameters<typeof SessionParityTestEnvironment>[1];

/** The parts of Jest's configuration the node environment reads, as Jest hands them over. */
function environmentConfig(): JestEnvironmentConfig {
  const projectConfig = { testEnvironmentOptions: {}, globals: {}, fakeTimers: {}, injectGlobals: true, rootDir: process.cwd(), cacheDirectory: "" };
  return { projectConfig, globalConfig: {} } as unknown as JestEnvironmentConfig;
}

const CONTEXT: EnvironmentContext = { console, docblockPragmas: {}, testPath: __filename };

describe("SessionParityTestEnvironment", () => {
  it("runs test files in a context whose global is the context object itself (no sandbox in between)", async () => {
    const environment = new SessionParityTestEnvironment(environmentConfig(), CONTEXT);
    try {
      const context = environment.getVmContext()!;
      expect(context).toBe(environment.global);
      expect(vm.runInContext("globalThis", context)).toBe(environment.global);
      expect(vm.runInContext("Math.imul(0x7fffffff, 3) + [1, 2].map((x) => x * 2).join()", context)).toBe(`${Math.imul(0x7fffffff, 3)}2,4`);
    } finally {
      await environment.teardown();
    }
  });

  it("installs Jest's node globals and lends the tokenizer store", async () => {
    const environment = new SessionParityTestEnvironment(environmentConfig(), CONTEXT);
    try {
      const global = environment.global as unknown as Record<PropertyKey, unknown>;
      for (const name of ["Buffer", "setTimeout", "clearTimeout", "setImmediate", "TextDecoder", "URL", "structuredClone", "fetch", "process"]) {
        expect([name, typeof global[name]]).toEqual([name, typeof (globalThis as Record<string, unknown>)[name]]);
      }
      expect(global.Buffer).toBe(Buffer);
      expect(vm.runInContext("typeof Buffer.from('x') + ':' + new TextDecoder().decode(new Uint8Array([104, 105]))", environment.getVmContext()!)).toBe(
        "object:hi",
      );
      const store = global[SHARED_TOKENIZER_FILES] as { files?: unknown } | undefined;
      expect(typeof store?.files).toBe("function");
    } finally {
      await environment.teardown();
    }
  });

  it("leaves node:vm's createContext as it was, also when Jest's constructor throws", () => {
    const before = vm.createContext;
    new SessionParityTestEnvironment(environmentConfig(), CONTEXT).teardown().catch(() => undefined);
    expect(vm.createContext).toBe(before);
    expect(() => new SessionParityTestEnvironment({} as JestEnvironmentConfig, CONTEXT)).toThrow();
    expect(vm.createContext).toBe(before);
    const ordinary = vm.createContext({ marker: 1 });
    expect(vm.runInContext("marker", ordinary)).toBe(1);
  });
});
