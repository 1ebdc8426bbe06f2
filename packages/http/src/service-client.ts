import { ErrorCodes, Errors, LocusError, type ErrorCode } from "@locus/contracts";
import { Attr, failSpan, SpanKind, startSpan, traceHeaders, withSpan, type Span } from "@locus/telemetry";
import type { Readable } from "node:stream";
import { Agent, request, type Dispatcher } from "undici";
import type { ZodType } from "zod";
import { currentRequestId } from "./request-context.ts";
import type { ServiceIdentity } from "./service-identity.ts";

/** Why a call past its time limit was cut short: one object for every call. */
const TIMED_OUT = new Error("The service did not answer within the time limit.");

/** Response headers worth passing on to the public client when a service refuses. */
const FORWARDED_HEADERS = ["retry-after", "www-authenticate"];

/** What a call sends besides the path: its method, headers, body and time limit. */
export interface CallInit {
  method?: string;
  headers?: Record<string, string>;
  /** A JSON text, or a stream (an upload's bytes), sent as it is read. */
  body?: string | Readable;
  /** Overrides the client's time limit for this call (headers and body). */
  timeoutMs?: number;
}

/**
 * The connections between services, one pool per process: kept alive between calls, since a
 * fresh connection per call would cost more than the call. undici's own `request` rather than
 * fetch, which builds WHATWG Request, Headers and stream objects around the same client: measured
 * on one gateway search, fetch's machinery was about a third of the gateway's own CPU.
 */
const connections = new Agent({ keepAliveTimeout: 4_000 });

/**
 * Calls another Locus service as the given user. A refusal comes back as the same LocusError the
 * service threw (code, message, Retry-After), so the gateway answers exactly as in one process;
 * a service that cannot be reached is a 503.
 */
export class ServiceClient {
  constructor(
    private readonly baseUrl: string,
    private readonly audience: string,
    private readonly identity: ServiceIdentity,
    private readonly timeoutMs = 30_000,
  ) {}

  /** Calls an endpoint that answers with no body (2xx); whatever it sends is read and dropped. */
  async request(userId: string, path: string, init: CallInit = {}): Promise<void> {
    const { res, done } = await this.send(userId, path, init);
    try {
      await res.body.dump();
    } finally {
      done();
    }
  }

  /**
   * The callee's JSON answer, read within the call's time limit and checked against the schema
   * the callee answers with. A body that does not match (a callee of another version, say) is an
   * internal error naming the endpoint and the first field that differs, not data half-understood.
   */
  async json<T>(userId: string, path: string, schema: ZodType<T>, init: CallInit = {}): Promise<T> {
    const { res, done } = await this.send(userId, path, init);
    let body: unknown;
    try {
      body = await res.body.json();
    } catch (err) {
      throw Errors.serviceBrokeOff(this.audience, err);
    } finally {
      done();
    }
    const parsed = schema.safeParse(body);
    if (parsed.success) return parsed.data;
    const [issue] = parsed.error.issues;
    // The query is left out: it can hold what the user searched for.
    const endpoint = `${init.method ?? "GET"} ${new URL(`${this.baseUrl}${path}`).pathname}`;
    throw new LocusError(
      "internal",
      `The ${this.audience} service's answer to ${endpoint} does not match the schema this process ` +
        `expects (a service of another version?): at ${fieldPath(issue?.path ?? [])}: ${issue?.message ?? "invalid"}.`,
      { cause: parsed.error },
    );
  }

  /**
   * Sends the call; a refusal is thrown as the callee's LocusError. `done` ends the time limit,
   * which runs until then (headers and body). The limit is a timer cleared when the call is done,
   * not AbortSignal.timeout: that one fires for every call, long after it ended, and builds a
   * DOMException each time (measured: about a tenth of the gateway's CPU per search).
   */
  private async send(userId: string, path: string, init: CallInit): Promise<Sent> {
    // A CLIENT span for the call, named by the service and method only (paths hold ids and the
    // query search text); its context goes in the request's headers, so the callee's SERVER span
    // continues the trace. Ended with the call: answered, refused or failed.
    const method = init.method ?? "GET";
    const span = startSpan(`${method} ${this.audience}`, {
      kind: SpanKind.CLIENT,
      attributes: { [Attr.httpMethod]: method, [Attr.peerService]: this.audience },
    });
    try {
      const sent = await withSpan(span, () => this.sendTraced(userId, path, method, init, span));
      const done = sent.done;
      return {
        res: sent.res,
        done: () => {
          done();
          span.end();
        },
      };
    } catch (err) {
      failSpan(span, err);
      span.end();
      throw err;
    }
  }

  private async sendTraced(
    userId: string,
    path: string,
    method: string,
    init: CallInit,
    span: Span,
  ): Promise<Sent> {
    const url = new URL(`${this.baseUrl}${path}`);
    // The token is good for this one request: its method, path and query, as the callee sees them.
    const token = await this.identity.sign(userId, this.audience, {
      method,
      path: `${url.pathname}${url.search}`,
    });
    const requestId = currentRequestId();
    const limit = new AbortController();
    const timer = setTimeout(() => limit.abort(TIMED_OUT), init.timeoutMs ?? this.timeoutMs);
    const done = () => clearTimeout(timer);
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method,
        dispatcher: connections,
        headers: {
          ...init.headers,
          authorization: `Bearer ${token}`,
          // The same id in the callee's logs as in the gateway's.
          ...(requestId ? { "x-request-id": requestId } : {}),
          ...traceHeaders(),
        },
        body: init.body,
        signal: limit.signal,
      });
    } catch (err) {
      done();
      throw Errors.serviceUnavailable(this.audience, err);
    }
    span.setAttribute(Attr.httpStatus, res.statusCode);
    if (res.statusCode >= 200 && res.statusCode < 300) return { res, done };
    const header = (name: string): string | undefined => {
      const value = res.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const code = header("x-locus-error-code");
    const body = (await res.body.json().catch(() => null)) as { detail?: unknown } | null;
    done();
    const message = typeof body?.detail === "string" ? body.detail : `The ${this.audience} service failed.`;
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_HEADERS) {
      const value = header(name);
      if (value) headers[name] = value;
    }
    if (code && code in ErrorCodes) throw new LocusError(code as ErrorCode, message, { headers });
    throw new LocusError(res.statusCode >= 500 ? "unavailable" : "internal", message, { headers });
  }
}

/** A call's answer with a 2xx status, and what ends its time limit. */
interface Sent {
  res: Dispatcher.ResponseData;
  done: () => void;
}

/** A field's place in a body as JavaScript would reach it: `files[0].status`; `(the body)` for the whole. */
function fieldPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(the body)";
  return path
    .map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`))
    .join("");
}
