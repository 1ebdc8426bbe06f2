import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { performance } from "node:perf_hooks";
import { webhookUrlFormProblem } from "@locus/contracts";
import { RefusedAddressError, type AddressGuard, type ResolvedTarget } from "./address-guard.ts";

/** How one attempt ended: the receiver's status (null when none came), and why it failed. */
export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  /** Null when it succeeded; otherwise a sentence for the delivery log (never a secret). */
  error: string | null;
  durationMs: number;
}

/** What is read of a receiver's answer before it is cut off: only its status matters. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * Posts one webhook attempt: only to an allowed address (checked now, and connected to as
 * checked), within a time limit, without following redirects (a redirect could lead anywhere,
 * around the address check). A 2xx answer is a success; anything else a failure with its reason.
 */
export class WebhookSender {
  constructor(
    private readonly guard: AddressGuard,
    private readonly timeoutMs: number,
  ) {}

  async send(rawUrl: string, body: string, headers: Record<string, string>): Promise<SendResult> {
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    const problem = webhookUrlFormProblem(rawUrl);
    if (problem) return { ok: false, statusCode: null, error: `The URL ${problem}.`, durationMs: took() };
    const url = new URL(rawUrl);
    let target: ResolvedTarget;
    try {
      target = await this.guard.check(url);
    } catch (error) {
      const reason = error instanceof RefusedAddressError ? error.message : "the host could not be checked";
      return { ok: false, statusCode: null, error: `Refused: ${reason}.`, durationMs: took() };
    }
    try {
      const statusCode = await this.post(url, target, body, headers);
      if (statusCode >= 200 && statusCode < 300)
        return { ok: true, statusCode, error: null, durationMs: took() };
      const error =
        statusCode >= 300 && statusCode < 400
          ? `The receiver answered with a redirect (HTTP ${statusCode}); redirects are not followed.`
          : `The receiver answered HTTP ${statusCode}.`;
      return { ok: false, statusCode, error, durationMs: took() };
    } catch (error) {
      return { ok: false, statusCode: null, error: describe(error, this.timeoutMs), durationMs: took() };
    }
  }

  private post(
    url: URL,
    target: ResolvedTarget,
    body: string,
    headers: Record<string, string>,
  ): Promise<number> {
    // The connection goes to the checked address whatever DNS says now; TLS still checks the
    // certificate against the URL's host name.
    const pinned: LookupFunction = (_host, options, callback) => {
      if (options.all) callback(null, [{ address: target.address, family: target.family }]);
      else callback(null, target.address, target.family);
    };
    const client = url.protocol === "https:" ? https : http;
    return new Promise<number>((resolve, reject) => {
      /** The status line, once it has come: it decides, whatever becomes of the body. */
      let status: number | undefined;
      const request = client.request(
        url,
        {
          method: "POST",
          lookup: pinned,
          headers: {
            ...headers,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
            "user-agent": "Locus-Webhooks/1.0",
          },
          // A fresh connection per attempt: a pooled one might have been made to another address.
          agent: false,
        },
        (response) => {
          status = response.statusCode ?? 0;
          let read = 0;
          response.on("data", (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_RESPONSE_BYTES) response.destroy();
          });
          response.on("error", () => {});
          // Its status decides; a body that is cut off (too long, too slow) does not change it.
          const done = () => {
            clearTimeout(timer);
            resolve(response.statusCode ?? 0);
          };
          response.on("close", done);
          response.on("end", done);
          response.resume();
        },
      );
      // Past the time allowed: no answer is a timeout; an answer whose body is still dripping is
      // its status (the rest of the body is not waited for).
      const timer = setTimeout(() => request.destroy(new TimeoutError()), this.timeoutMs);
      request.on("error", (error) => {
        clearTimeout(timer);
        if (status === undefined) reject(error);
        else resolve(status);
      });
      request.end(body);
    });
  }
}

class TimeoutError extends Error {
  constructor() {
    super("timed out");
    this.name = "TimeoutError";
  }
}

function describe(error: unknown, timeoutMs: number): string {
  if (error instanceof TimeoutError) return `The receiver did not answer within ${timeoutMs} ms.`;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ECONNREFUSED":
      return "The receiver refused the connection.";
    case "ECONNRESET":
      return "The receiver closed the connection without an answer.";
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "The receiver's address could not be reached.";
    default:
      if (typeof code === "string" && (code.startsWith("ERR_TLS") || code.includes("CERT")))
        return `The receiver's TLS certificate was not accepted (${code}).`;
      return `The request failed${code ? ` (${code})` : ""}.`;
  }
}
