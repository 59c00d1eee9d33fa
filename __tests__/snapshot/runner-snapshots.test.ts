// toMatchBitwiseSnapshot under real Jest and Vitest child processes: first write, one-bit failure, --ci, a hand-edited
// file, obsolete reporting and -u removal, the stored .safetensors files following the snapshot each time.
import * as fs from "node:fs";
import * as path from "node:path";
import { ScratchProject } from "./scratch-project";

jest.setTimeout(180_000);

describe("toMatchBitwiseSnapshot under Jest (child processes on a scratch project)", () => {
  const project = new ScratchProject("jest");
  afterAll(() => project.remove());

  test("writes, fails on one bit, refuses to write under --ci, names an unreadable line, reports and removes obsolete snapshots", () => {
    // 1. First run: both snapshots written by Jest's own state, the large tensor stored beside the file.
    const first = project.run([]);
    expect(first.output).toContain("2 snapshots written");
    expect(first.status).toBe(0);
    const written = fs.readFileSync(project.snapshotFile, "utf8");
    expect(written).toContain("exports[`pins the payload 1`] = `\nSample {");
    expect(written).toContain("    0xbfd0000000000000 (-0.25)\n");
    expect(written).toContain("    0x8000000000000000 (-0)\n");
    expect(written).toMatch(/"routed": Tensor I32 \[1000, 6\] length 6000 sha256 [0-9a-f]{64} stored\n/);
    const stored = project.storedFiles();
    expect(stored).toHaveLength(1);

    // 2. --ci with one flipped log-prob bit, one flipped tensor element and a new snapshot: all three fail, nothing is written.
    const ci = project.run(["--ci"], { FLIP_LOG_PROB: "1", FLIP_ROUTED: "1", ADD_NEW: "1" });
    expect(ci.status).toBe(1);
    expect(ci.output).toContain("Snapshot name: `pins the payload 1`");
    expect(ci.output).toContain(
      "sample.rollout_log_probs[1]: 0xbfd0000000000001 (-0.25000000000000006) vs 0xbfd0000000000000 (-0.25)\n    1 difference in total",
    );
    expect(ci.output).toContain("Snapshot name: `pins the payload: routed 1`");
    expect(ci.output).toContain("value.routed[720, 1]: 38 vs 39\n    1 difference in total");
    expect(ci.output).toContain(
      "Snapshot name: `pins the payload: added 1`\n\n    New snapshot was not written. The update flag must be explicitly passed to write a new snapshot.",
    );
    expect(ci.output).toContain("3 snapshots failed");
    expect(fs.readFileSync(project.snapshotFile, "utf8")).toBe(written);
    expect(project.storedFiles()).toEqual(stored);

    // 3. A hand edit that breaks the format: the failure names the file and line; the file is left as it was.
    //    The stored tensor file, deleted meanwhile, comes back beside the matching snapshot (the runner may write).
    fs.rmSync(path.join(path.dirname(project.snapshotFile), stored[0]));
    expect(project.storedFiles()).toEqual([]);
    const edited = written.replace("    0xbfd0000000000000 (-0.25)\n", "    0xbfd0000000000000 (-0.2)\n");
    fs.writeFileSync(project.snapshotFile, edited);
    const editedLine = edited.split("\n").findIndex((line) => line === "    0xbfd0000000000000 (-0.2)") + 1;
    const unreadable = project.run([]);
    expect(unreadable.status).toBe(1);
    expect(unreadable.output).toContain(
      `The stored snapshot cannot be read as a bit tree: ${project.snapshotFile}:${editedLine}: the value beside the bits (-0.2) is not what the bits hold (-0.25)`,
    );
    expect(fs.readFileSync(project.snapshotFile, "utf8")).toBe(edited);
    expect(project.storedFiles()).toEqual(stored);
    fs.writeFileSync(project.snapshotFile, written);

    // 4. The stored snapshot no longer asserted: Jest reports it obsolete and keeps it and its tensor file.
    const obsolete = project.run([], { DROP_STORED: "1" });
    // Jest 30 itself ends a run that leaves an obsolete snapshot with status 1 (the test passed).
    expect(obsolete.output).toContain("Tests:       1 passed, 1 total");
    expect(obsolete.status).toBe(1);
    expect(obsolete.output).toContain("1 snapshot obsolete");
    expect(fs.readFileSync(project.snapshotFile, "utf8")).toBe(written);
    expect(project.storedFiles()).toEqual(stored);

    // 5. -u: the obsolete snapshot is removed, and so is its tensor file; the changed log-prob is rewritten.
    const update = project.run(["-u"], { DROP_STORED: "1", FLIP_LOG_PROB: "1" });
    expect(update.status).toBe(0);
    expect(update.output).toMatch(/1 snapshot updated/);
    expect(update.output).toMatch(/1 snapshot removed/);
    const rewritten = fs.readFileSync(project.snapshotFile, "utf8");
    expect(rewritten).toContain("    0xbfd0000000000001 (-0.25000000000000006)\n");
    expect(rewritten).not.toContain("pins the payload: routed");
    expect(project.storedFiles()).toEqual([]);
  });
});

describe("toMatchBitwiseSnapshot under Vitest (child processes on a scratch project)", () => {
  const project = new ScratchProject("vitest");
  afterAll(() => project.remove());

  test("writes through Vitest's snapshot client, lists the differing leaf, and -u rewrites the stored tensor", () => {
    const first = project.run([]);
    expect(first.output).toMatch(/Snapshots\s+2 written/);
    expect(first.status).toBe(0);
    const written = fs.readFileSync(project.snapshotFile, "utf8");
    expect(written).toContain("exports[`pins the payload 1`] = `\nSample {");
    const stored = project.storedFiles();
    expect(stored).toHaveLength(1);

    const mismatch = project.run([], { FLIP_ROUTED: "1" });
    expect(mismatch.status).toBe(1);
    expect(mismatch.output).toContain("Snapshot name: `pins the payload > routed 1`");
    expect(mismatch.output).toContain("value.routed[720, 1]: 38 vs 39\n1 difference in total");
    expect(fs.readFileSync(project.snapshotFile, "utf8")).toBe(written);

    const update = project.run(["-u"], { FLIP_ROUTED: "1" });
    expect(update.status).toBe(0);
    expect(update.output).toMatch(/Snapshots\s+1 updated/);
    const after = project.storedFiles();
    expect(after).toHaveLength(1);
    expect(after).not.toEqual(stored);
  });
});
