// The package version as the CLI prints it (`--version`, the report); the lookup lives with the server's /health.
// Kept here so the CLI's public surface does not change.
export { packageVersion } from "../server/package-version";
