import { randomUUID } from "node:crypto";
import type { MessageOf } from "@locus/contracts";
import type { Logger } from "@locus/runtime";
import type { Bus } from "../src/bus.ts";
import { giveUpOnFile } from "../src/give-up.ts";

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
