// The smoke project's setup file: exactly what a user's Vitest setup does to get the matchers.
// (A user may also list "jest-session-parity/vitest" directly under test.setupFiles.)
import "jest-session-parity/vitest";
