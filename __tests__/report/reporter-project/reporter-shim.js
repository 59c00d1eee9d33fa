// Loads the reporter entry from the TypeScript sources for the child Jest of the reporter test (Jest does not
// transform reporters); the published package points `jest-session-parity/reporter` at the compiled file instead.
"use strict";
require("ts-node/register/transpile-only");
module.exports = require("../../../setup/reporter.ts");
