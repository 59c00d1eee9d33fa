// Lets `setupFilesAfterEnv: ["jest-session-parity"]` (the package root) work like `jest-session-parity/setup`: when the
// root is loaded where a runner's global `expect` exists and the matchers are not registered yet, it registers them.
import { registerSessionParityMatchers, type ExpectLike } from "./registry";

const globalExpect = (globalThis as { expect?: Partial<ExpectLike> & Record<string, unknown> }).expect;
if (globalExpect !== undefined && typeof globalExpect.extend === "function" && typeof globalExpect.toBeBitwiseEqual !== "function") {
  registerSessionParityMatchers(globalExpect as ExpectLike);
}
