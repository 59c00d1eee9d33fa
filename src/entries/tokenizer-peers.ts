// Loaded first by the `jest-session-parity/tokenizer` entry: stops with the exact install line when the Hugging Face
// tokenizer or Jinja library is missing, before either is required.
import { PEERS_OF, requirePeers } from "../peers/optional-peers";

requirePeers("jest-session-parity/tokenizer", PEERS_OF.tokenizer);
