// The registry of TITO model families: one entry per `--tito-model` value this package implements.
// A family is added by writing its file next to this one and listing it in FAMILIES below.
import { DEEPSEEKV32_FAMILY } from "./deepseekv32";
import { DEEPSEEKV4_FAMILY } from "./deepseekv4";
import { DEFAULT_FAMILY } from "./default";
import { GLM47_FAMILY } from "./glm47";
import { GLM53_FAMILY } from "./glm53";
import { INKLING_FAMILY } from "./inkling";
import { KIMI25_FAMILY } from "./kimi25";
import { KIMI26_FAMILY } from "./kimi26";
import { MINIMAX_M25_FAMILY } from "./minimax-m25";
import { MINIMAX_M27_FAMILY } from "./minimax-m27";
import { NEMOTRON3_FAMILY } from "./nemotron3";
import { QWEN3_FAMILY } from "./qwen3";
import { QWEN35_FAMILY } from "./qwen35";
import { QWENNEXT_FAMILY } from "./qwennext";
import { TitoModelError, type TitoFamily } from "./types";

/** The family used when none is named (the package's packaged vocabulary is Qwen3's). */
export const DEFAULT_TITO_MODEL = "qwen3";

/** Every `TITOTokenizerType` value of miles (plus `glm53`, added later upstream), implemented here or not. */
export const MILES_TITO_MODELS: readonly string[] = Object.freeze([
  "default",
  "qwen3",
  "qwen35",
  "qwennext",
  "glm47",
  "glm53",
  "nemotron3",
  "kimi25",
  "kimi26",
  "minimax_m25",
  "minimax_m27",
  "deepseekv32",
  "deepseekv4",
  "inkling",
]);

const FAMILIES: readonly TitoFamily[] = [
  DEFAULT_FAMILY,
  QWEN3_FAMILY,
  QWEN35_FAMILY,
  QWENNEXT_FAMILY,
  GLM47_FAMILY,
  GLM53_FAMILY,
  NEMOTRON3_FAMILY,
  KIMI25_FAMILY,
  KIMI26_FAMILY,
  MINIMAX_M25_FAMILY,
  MINIMAX_M27_FAMILY,
  INKLING_FAMILY,
  DEEPSEEKV32_FAMILY,
  DEEPSEEKV4_FAMILY,
];

const BY_NAME: ReadonlyMap<string, TitoFamily> = new Map(FAMILIES.map((family) => [family.name, family]));

/** Names of the families this package implements, in registry order. */
export function titoFamilyNames(): string[] {
  return FAMILIES.map((family) => family.name);
}

/** All registered families, in registry order. */
export function titoFamilies(): readonly TitoFamily[] {
  return FAMILIES;
}

/**
 * The family registered under `name`.
 * @throws TitoModelError ("unknown-family") naming the registered families, and saying so when miles knows the name
 * but this package does not implement it yet
 */
export function getTitoFamily(name: string): TitoFamily {
  const family = BY_NAME.get(name);
  if (family !== undefined) return family;
  const known = titoFamilyNames().join(", ");
  const upstream = MILES_TITO_MODELS.includes(name) ? ` (miles has ${JSON.stringify(name)}, but this package does not implement it yet)` : "";
  throw new TitoModelError("unknown-family", name, `unknown --tito-model ${JSON.stringify(name)}${upstream}; registered families: ${known}`);
}
