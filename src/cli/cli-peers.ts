// Loaded first by the `session-parity` command: stops with the exact install line (exit 2) when an optional peer the
// command line needs is missing, before commander or any server module is required.
import { PEERS_OF, MissingPeerError, requirePeers } from "../peers/optional-peers";

try {
  requirePeers("the session-parity command", PEERS_OF.cli);
} catch (error) {
  if (!(error instanceof MissingPeerError)) throw error;
  console.error(error.message);
  process.exit(2);
}
