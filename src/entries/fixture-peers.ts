// Loaded first by the Jest global setup: stops with the exact install line when an optional peer the mock backend and
// the servers need is missing, before any of their modules is required.
import { PEERS_OF, requirePeers } from "../peers/optional-peers";

requirePeers("jest-session-parity/global-setup", PEERS_OF.servers);
