// A throwaway Jest or Vitest project under os.tmpdir() that pins values with toMatchBitwiseSnapshot, run as a child
// process, so the -u / --ci / obsolete behaviour is the real runner's and the repository's snapshot files stay untouched.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const REPO = path.resolve(__dirname, "..", "..");

/** The test file both runners execute; env switches flip one bit, drop a snapshot or add a new one. */
function pinTest(runner: "jest" | "vitest"): string {
  const src = (module: string): string => JSON.stringify(path.join(REPO, "src", module));
  return [
    runner === "vitest" ? `import { expect, test } from "vitest";` : "",
    `import { Sample } from ${src("wire/sample")};`,
    `import { Tensor } from ${src("wire/tensor")};`,
    `const routed = new Int32Array(6000).map((_, i) => (i * 7) % 64);`,
    `test("pins the payload", () => {`,
    `  const logProbs = [-0.5, -0.25, -0];`,
    `  if (process.env.FLIP_LOG_PROB === "1") logProbs[1] = -0.25000000000000006;`,
    `  expect(new Sample({ tokens: [1, 2, 3], response_length: 3, loss_mask: [1, 1, 1], rollout_log_probs: logProbs, status: "completed" })).toMatchBitwiseSnapshot();`,
    `  if (process.env.FLIP_ROUTED === "1") routed[4321] ^= 1;`,
    `  if (process.env.DROP_STORED !== "1") expect({ routed: new Tensor("I32", [1000, 6], routed) }).toMatchBitwiseSnapshot("routed", { largeArrays: "safetensors" });`,
    `  if (process.env.ADD_NEW === "1") expect({ added: 1 }).toMatchBitwiseSnapshot("added");`,
    `});`,
    "",
  ].join("\n");
}

/** One child run's outcome. */
export interface ScratchRun {
  status: number | null;
  output: string;
}

/** A scratch project directory with one pinning test file; `remove()` deletes it. */
export class ScratchProject {
  readonly dir: string;

  constructor(readonly runner: "jest" | "vitest") {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), `bitwise-snapshot-${runner}-`));
    fs.writeFileSync(path.join(this.dir, "pin.test.ts"), pinTest(runner));
    if (runner === "jest") {
      const config = {
        rootDir: this.dir,
        testEnvironment: "node",
        testMatch: ["**/*.test.ts"],
        transform: {
          "^.+\\.ts$": [path.join(REPO, "node_modules", "ts-jest"), { tsconfig: { esModuleInterop: true, isolatedModules: true }, diagnostics: false }],
        },
        setupFilesAfterEnv: [path.join(REPO, "setup", "setup.ts")],
      };
      fs.writeFileSync(path.join(this.dir, "jest.config.json"), JSON.stringify(config));
    } else {
      const config = { test: { root: this.dir, include: ["*.test.ts"], setupFiles: [path.join(REPO, "setup", "vitest.mts")], environment: "node" } };
      fs.writeFileSync(path.join(this.dir, "vitest.config.mjs"), `export default ${JSON.stringify(config)};\n`);
    }
  }

  /** The snapshot file's path. */
  get snapshotFile(): string {
    return path.join(this.dir, "__snapshots__", "pin.test.ts.snap");
  }

  /** Names of the stored large-value files beside the snapshot file. */
  storedFiles(): string[] {
    const directory = path.join(this.dir, "__snapshots__");
    return fs.existsSync(directory)
      ? fs
          .readdirSync(directory)
          .filter((name) => name.endsWith(".safetensors"))
          .sort()
      : [];
  }

  /** Runs the runner once with extra flags and env switches; colours off, CI unset unless `--ci` is passed. */
  run(flags: readonly string[], env: Record<string, string> = {}): ScratchRun {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, FORCE_COLOR: "0", NO_COLOR: "1" };
    delete childEnv.CI;
    delete childEnv.JEST_WORKER_ID;
    const args =
      this.runner === "jest"
        ? [
            path.join(REPO, "node_modules", "jest", "bin", "jest.js"),
            "--config",
            path.join(this.dir, "jest.config.json"),
            ...(flags.includes("--ci") ? [] : ["--ci=false"]),
            ...flags,
          ]
        : [path.join(REPO, "node_modules", "vitest", "vitest.mjs"), "run", "--config", path.join(this.dir, "vitest.config.mjs"), ...flags];
    const result = spawnSync(process.execPath, args, { cwd: this.dir, env: childEnv, encoding: "utf8", timeout: 120_000 });
    return { status: result.status, output: `${result.stdout}\n${result.stderr}` };
  }

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
