// Type-level fixture (checked by `npm run typecheck`, never run by Jest): the matchers type-check with
// `@jest/globals`, i.e. through the `declare module "expect"` augmentation pulled in by the package root.
import { expect } from "@jest/globals";
import { Sample, trainingMetadataProjection, type BitwiseEqualTo, type BitwiseOptions } from "../../src";

export function typecheckJestGlobals(left: Sample, right: Sample): void {
  expect(left).toBeBitwiseEqual(right);
  expect(left).not.toBeBitwiseEqual(right);
  expect(left).toBeBitwiseEqual(right, { metadataProjection: trainingMetadataProjection, maxDifferences: 5, rootPath: "v1.sample" });
  const options: BitwiseOptions = { maxDifferences: 3 };
  expect([left]).toBeBitwiseEqual([right], options);
  const matcher: BitwiseEqualTo = expect.bitwiseEqualTo(right, { metadataProjection: trainingMetadataProjection });
  expect({ sample: left }).toEqual({ sample: matcher });
  expect({ sample: left }).toEqual({ sample: expect.not.bitwiseEqualTo(right) });
  void expect(Promise.resolve(left)).resolves.toBeBitwiseEqual(right);

  // @ts-expect-error maxDifferences must be a number
  expect(left).toBeBitwiseEqual(right, { maxDifferences: "ten" });
  // @ts-expect-error the projection receives metadata and must be a function
  expect(left).toBeBitwiseEqual(right, { metadataProjection: "trainingMetadataProjection" });
  // @ts-expect-error unknown option
  expect(left).toBeBitwiseEqual(right, { tolerance: 1e-9 });
  // @ts-expect-error the expected value is required
  expect(left).toBeBitwiseEqual();
}
