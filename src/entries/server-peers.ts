// Loaded first by the `jest-session-parity/server` entry: stops with the exact install line when an optional peer the
// servers need is missing, before any of their modules is required.
import { PEERS_OF, requirePeers } from "../peers/optional-peers";

requirePeers("jest-session-parity/server", PEERS_OF.servers);
