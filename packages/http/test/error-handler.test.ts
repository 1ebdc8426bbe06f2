import type { AddressInfo } from "node:net";
import express from "express";
import { Errors, LocusError } from "@locus/contracts";
import { createLogger } from "@locus/runtime";
import { errorHandler } from "../src/index.ts";

/**
 * The one error handler, behind a real express app on a loopback port: what the client gets, and
 * what the operator's log says.
 */
describe("errorHandler", () => {
  // The real logger, silent, its warnings and errors also kept here to be read.
  const logger = createLogger("test", "silent");
  const logged: { level: "warn" | "error"; fields: { err?: Error }; message: string }[] = [];
  logger.warn = ((fields: { err?: Error }, message: string) => {
    logged.push({ level: "warn", fields, message });
  }) as typeof logger.warn;
  logger.error = ((fields: { err?: Error }, message: string) => {
    logged.push({ level: "error", fields, message });
  }) as typeof logger.error;
  const app = express();
  app.get("/mismatch", () => {
    throw new LocusError("internal", "The files service's answer to GET /internal/files does not match.");
  });
  app.get("/missing", () => {
    throw Errors.fileNotFound();
  });
  app.use(errorHandler(logger));
  let base: string;
  let close: () => void;

  beforeAll(async () => {
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close());
  beforeEach(() => logged.splice(0));

  it("answers a LocusError of Locus's own fault with its sentence, and logs it as an error", async () => {
    const res = await fetch(`${base}/mismatch`);
    expect(res.status).toBe(500);
    expect(res.headers.get("x-locus-error-code")).toBe("internal");
    expect(await res.json()).toEqual({
      detail: "The files service's answer to GET /internal/files does not match.",
    });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: "error", message: "internal error answered" });
    expect(logged[0]?.fields.err?.message).toMatch(/does not match/);
  });

  it("answers a client's error without logging it as the operator's problem", async () => {
    const res = await fetch(`${base}/missing`);
    expect(res.status).toBe(404);
    expect(logged).toEqual([]);
  });
});
