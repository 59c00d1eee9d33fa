// The "did you mean" hint of an unknown command: typos within a few edits get the closest command, other words none.
import { closestWord, editDistance } from "../../src/cli/did-you-mean";

const COMMANDS = ["mock", "serve", "run", "fuzz", "verify-template"];

test.each([
  ["rnu", "run"],
  ["serv", "serve"],
  ["RUN", "run"],
  ["fuz", "fuzz"],
  ["verify-tempalte", "verify-template"],
  ["mokc", "mock"],
])("%s -> %s", (typo, command) => {
  expect(closestWord(typo, COMMANDS)).toBe(command);
});

test.each(["bogus", "x", "deploy"])("%s is no typo of any command", (word) => {
  expect(closestWord(word, COMMANDS)).toBeNull();
});

test("an adjacent swap is one edit", () => {
  expect(editDistance("rnu", "run")).toBe(1);
  expect(editDistance("abc", "abc")).toBe(0);
  expect(editDistance("", "run")).toBe(3);
});
