// A missing optional peer is named with the exact `npm i -D` line, before anything that needs it is loaded.
import { installLine, MissingPeerError, PEERS_OF, requirePeers } from "../../src/peers/optional-peers";
import { pageText } from "../docs/pages";

/** A resolver that finds every package except `missing`. */
const without =
  (...missing: string[]) =>
  (name: string): string => {
    if (missing.some((peer) => name === peer || name.startsWith(`${peer}/`)))
      throw Object.assign(new Error(`Cannot find module '${name}'`), { code: "MODULE_NOT_FOUND" });
    return `/node_modules/${name}`;
  };

test("nothing is thrown when every peer resolves", () => {
  expect(() => requirePeers("the fixture", PEERS_OF.servers, without())).not.toThrow();
});

test("the missing peers are listed with the install line at the ranges package.json declares", () => {
  let caught: unknown;
  try {
    requirePeers("startParityEnvironment()", PEERS_OF.servers, without("msw", "undici"));
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(MissingPeerError);
  expect((caught as MissingPeerError).missing).toEqual(["msw", "undici"]);
  expect((caught as Error).message).toBe(
    "jest-session-parity: startParityEnvironment() needs packages that are not installed: msw, undici. They are optional peer dependencies of " +
      "jest-session-parity (a matcher-only install leaves them out); install them with: npm i -D msw@^2.15.0 undici@^7.30.2",
  );
  // getting-started shows this very message.
  expect(pageText("docs/getting-started.md").replace(/\n/g, " ")).toContain((caught as Error).message);
});

test("the command line needs commander besides the servers' peers", () => {
  expect(PEERS_OF.cli).toEqual(expect.arrayContaining(["commander", ...PEERS_OF.servers]));
  expect(installLine(["commander"])).toMatch(/^npm i -D commander@\^\d+\.\d+\.\d+$/);
});
