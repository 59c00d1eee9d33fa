// Loaded first by the `jest-session-parity/mock` entry: stops with the exact install line when an optional peer the
// mock backend needs is missing, before msw or the tokenizer is required.
import { PEERS_OF, requirePeers } from "../peers/optional-peers";

requirePeers("jest-session-parity/mock", PEERS_OF.servers);
