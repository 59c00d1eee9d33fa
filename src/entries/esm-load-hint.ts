// Turns Jest's raw "Must use import to load ES Module" (msw's ESM-only dependencies under a CommonJS transform) into
// an error that names this package and the one config line that fixes it. Used by the on-demand entry points.

/** The packages msw 2 pulls in that ship ESM only (the preset transforms exactly these). */
const MSW_ESM_PACKAGES =
  /[\\/]node_modules[\\/](rettime|until-async|@open-draft|@mswjs|msw|headers-polyfill|outvariant|strict-event-emitter|is-node-process)[\\/]/;

/** True when `error` is a CommonJS runtime failing to load one of msw's ESM-only dependencies. */
function isMswEsmLoadError(error: unknown): error is Error {
  // Jest's runtime creates this error in its own realm, so `instanceof Error` is false inside a test: read it by shape.
  if (typeof error !== "object" || error === null) return false;
  const { message, stack } = error as { message?: unknown; stack?: unknown };
  if (typeof message !== "string") return false;
  const esm =
    /Must use import to load ES Module|Cannot use import statement outside a module|Unexpected token 'export'|ERR_REQUIRE_ESM|require\(\) of ES Module/;
  return esm.test(message) && (MSW_ESM_PACKAGES.test(message) || MSW_ESM_PACKAGES.test(String(stack)));
}

/**
 * Rethrows `error` as is, unless it is the ESM load failure of msw's dependencies: then as an Error (the original in
 * `cause`) saying which entry point needs them and which Jest config line transforms them.
 */
export function explainEsmLoadError(error: unknown, entryPoint: string, hasTsJest: () => boolean = tsJestInstalled): never {
  if (!isMswEsmLoadError(error)) throw error;
  const first = error.message.split("\n")[0];
  // The preset's transform runs ts-jest; a plain-JavaScript project may not have it (nor TypeScript).
  const install = hasTsJest() ? "" : "install the transform it uses (npm i -D ts-jest@29 typescript@5; this project has no ts-jest), then ";
  throw new Error(
    `jest-session-parity: ${entryPoint}() starts the mock backend, which loads msw, whose dependencies ship ES modules only, ` +
      `and this Jest config does not transform them (${first}). Fix it in jest.config: ${install}use \`preset: "jest-session-parity"\`, or, ` +
      `keeping your own preset, spread its pieces: \`const sessionParity = require("jest-session-parity/jest-preset");\` then ` +
      `\`transform: { ...sessionParity.transform, ...yourTransforms }, transformIgnorePatterns: sessionParity.transformIgnorePatterns\`. ` +
      `Or, with no transform at all, keep msw out of the test runtime: use the global hooks (globalSetup: "jest-session-parity/global-setup", ` +
      `globalTeardown: "jest-session-parity/global-teardown"), which start the servers in Jest's own process and pass their URLs.`,
    { cause: error },
  );
}

/** True when ts-jest resolves from the project Jest runs in (the preset's transform needs it). */
function tsJestInstalled(): boolean {
  try {
    require.resolve("ts-jest", { paths: [process.cwd()] });
    return true;
  } catch {
    return false;
  }
}
