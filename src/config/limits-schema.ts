import * as z from 'zod';

/** `limits:` of kbsync.yaml: size limits on top of the plan's, and each document conversion's time and memory. */
export const Limits = z
  .strictObject({
    maxFileBytes: z
      .number()
      .int()
      .positive()
      .nullable()
      .default(null)
      .describe("Largest file to upload; null means the plan's limit from docs/api.md."),
    convertSeconds: z
      .number()
      .positive()
      .default(120)
      .describe("Longest one document's conversion may take, in seconds; past it the file is skip:convert-failed."),
    convertMemoryMb: z
      .number()
      .int()
      .min(32)
      .default(512)
      .describe("Largest JavaScript heap one document's conversion may use, in MB; past it the file is skip:convert-failed."),
  })
  .prefault({});
