// The `minimax_m27` family (miles' MinimaxM27TITOTokenizer): MiniMax-M2.7, M2.5's tokenizer and rules on M2.7's
// fixed template (it differs only in the default system identity).
import { MINIMAX_M25_FAMILY } from "./minimax-m25";
import type { TitoFamily } from "./types";

/** `--tito-model minimax_m27`: mirrors `MinimaxM27TITOTokenizer` (tito_tokenizer.py at miles 31f1ca96). */
export const MINIMAX_M27_FAMILY: TitoFamily = Object.freeze<TitoFamily>({
  ...MINIMAX_M25_FAMILY,
  name: "minimax_m27",
  pythonClass: "MinimaxM27TITOTokenizer",
  summary: "MiniMax-M2.7: M2.5's rules on miles' M2.7 fixed template (another default system identity)",
  template: { kind: "bundled", file: "miles-templates/minimax_m27_fixed.jinja", verbatim: true },
});
