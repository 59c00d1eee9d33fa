// Type-level fixture (checked by `npm run typecheck`, never run by Jest): the matchers type-check with
// the global `expect` of @types/jest, i.e. through the `jest.Matchers` / `jest.Expect` augmentation.
import "../../src";
import { Sample, trainingMetadataProjection } from "../../src";

export function typecheckJestGlobalNamespace(left: Sample, right: Sample): void {
  expect(left).toBeBitwiseEqual(right);
  expect(left).not.toBeBitwiseEqual(right);
  expect(left).toBeBitwiseEqual(right, { metadataProjection: trainingMetadataProjection, maxDifferences: 20 });
  expect({ sample: left }).toEqual({ sample: expect.bitwiseEqualTo(right) });
  expect({ sample: left }).toEqual({ sample: expect.not.bitwiseEqualTo(right) });
  const matchers: jest.Matchers<void, Sample> = expect(left);
  matchers.toBeBitwiseEqual(right);

  // @ts-expect-error maxDifferences must be a number
  expect(left).toBeBitwiseEqual(right, { maxDifferences: "ten" });
  // @ts-expect-error unknown option
  expect(left).not.toBeBitwiseEqual(right, { tolerance: 1e-9 });
}
