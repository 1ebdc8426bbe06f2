import { randomUUID } from "node:crypto";
import type { MessageOf } from "@locus/contracts";
import type { Logger } from "@locus/runtime";
import type { Bus } from "../src/bus.ts";
import { abandonFile, giveUpOnFile } from "../src/give-up.ts";

/** A bus and a logger that only remember what they were given. */
function recorder() {
  const published: { topic: string; message: unknown }[] = [];
  const logged: { fields: unknown; message: string }[] = [];
  const bus = {
    publish: (topic: string, message: unknown) => {
      published.push({ topic, message });
      return Promise.resolve();
    },
  } as unknown as Bus;
  const logger = {
    error: (fields: unknown, message: string) => logged.push({ fields, message }),
  } as unknown as Logger;
  return { bus, logger, published, logged };
}

const giveUp = {
  code: "indexing_failed",
  message: "Locus could not index this file's text.",
  log: "indexing failed on its last attempt",
  logFields: { blobKey: "k" },
} as const;

it("only rethrows before the last attempt: the bus retries", async () => {
  const { bus, logger, published, logged } = recorder();
  const file = { fileId: randomUUID(), userId: randomUUID() };
  const err = new Error("boom");
  await expect(giveUpOnFile({ bus, logger }, { final: false }, file, err, giveUp)).rejects.toBe(err);
  expect(published).toEqual([]);
  expect(logged).toEqual([]);
});

it("on the last attempt logs, fails the file with the reason, and still rethrows", async () => {
  const { bus, logger, published, logged } = recorder();
  const file = { fileId: randomUUID(), userId: randomUUID() };
  const err = new Error("boom");
  await expect(giveUpOnFile({ bus, logger }, { final: true }, file, err, giveUp)).rejects.toBe(err);
  expect(logged).toEqual([{ fields: { err, fileId: file.fileId, blobKey: "k" }, message: giveUp.log }]);
  expect(published).toEqual([
    {
      topic: "file.failed",
      message: {
        ...file,
        error: { code: "indexing_failed", message: giveUp.message },
      } satisfies MessageOf<"file.failed">,
    },
  ]);
});

it('carries the stages its caller knows to the failed file\'s message, for the "file failed" line', async () => {
  const { bus, logger, published } = recorder();
  const file = { fileId: randomUUID(), userId: randomUUID() };
  const stages = { waited: 1.5, extraction: 12.25 };
  await expect(
    giveUpOnFile({ bus, logger }, { final: true }, file, new Error("x"), { ...giveUp, stages }),
  ).rejects.toThrow();
  expect(published).toEqual([
    {
      topic: "file.failed",
      message: { ...file, error: { code: "indexing_failed", message: giveUp.message }, stages },
    },
  ]);
});

it("abandons a file with processing_abandoned and the reason in the log", async () => {
  const { bus, logger, published, logged } = recorder();
  const file = { fileId: randomUUID(), userId: randomUUID() };
  await abandonFile({ bus, logger }, file, "PDF extraction", "abandoned: delivered 6 times");
  expect(logged).toEqual([
    {
      fields: { fileId: file.fileId, reason: "abandoned: delivered 6 times" },
      message: "PDF extraction abandoned: its workers kept stopping before an answer",
    },
  ]);
  expect(published).toEqual([
    {
      topic: "file.failed",
      message: {
        ...file,
        error: {
          code: "processing_abandoned",
          message: expect.stringMatching(/^Locus gave up on this file: the PDF extraction stopped/) as string,
        },
      },
    },
  ]);
});
