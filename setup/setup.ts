// The `setupFilesAfterEnv` entry (`jest-session-parity/setup`): registers the matchers on Jest's expect.
// Importing it also brings the matcher typings into scope.
export {};
