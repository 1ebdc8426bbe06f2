import express, { Router } from "express";
import { z, type ZodType } from "zod";
import { LocusError } from "@locus/contracts";
import { ServiceClient, type CallInit } from "./service-client.ts";
import { callerOf, type ServiceIdentity } from "./service-identity.ts";

/** What the gateway sends in a JSON body is small: a webhook endpoint's settings, say. */
const JSON_BODY_LIMIT = "16kb";

/**
 * Values that travel as text (in a query or a header), each one codec: the client encodes with
 * it, the callee decodes and checks with it.
 */
export const wire = {
  /** A query's fields, by name (the services that declare one need not depend on zod). */
  query: z.object,
  /** Text as it is. */
  text: z.string(),
  /** A whole number, as its digits. */
  int: z.codec(z.string().regex(/^-?\d+$/), z.int(), { decode: Number, encode: String }),
  /** A value as JSON, checked against its schema on arrival; base64url keeps it one opaque token. */
  json: <T extends ZodType>(schema: T, encoding: "utf8" | "base64url" = "utf8") =>
    z.codec(z.string(), schema, {
      decode: (text, ctx) => {
        try {
          return JSON.parse(
            encoding === "utf8" ? text : Buffer.from(text, encoding).toString("utf8"),
          ) as z.input<T>;
        } catch {
          ctx.issues.push({ code: "custom", message: "not JSON", input: text });
          return z.NEVER;
        }
      },
      encode: (value) => {
        const text = JSON.stringify(value);
        return encoding === "utf8" ? text : Buffer.from(text).toString(encoding);
      },
    }),
};

/** What the gateway sent that does not match its schema (a gateway of another version): a 400. */
export function fromGateway<T extends ZodType>(schema: T, value: unknown, what?: string): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const field = what ?? String(parsed.error.issues[0]?.path[0] ?? "request");
  throw new LocusError("bad_request", `The ${field} sent by the gateway could not be read.`);
}

type Method = "GET" | "POST" | "PATCH" | "DELETE";
type Fn = (...args: never[]) => Promise<unknown>;
/** A query's fields travel as text: its schema's input is strings (see `wire`). */
type QuerySchema = ZodType<unknown, Record<string, string | undefined>>;

/** The names of a path's `:params`. */
type ParamNames<Path extends string> = Path extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<Rest>
  : Path extends `${string}:${infer Name}`
    ? Name
    : never;

/** One call as it travels: the user it is made as, its path's params, and its query and body as declared. */
export type Call<Path extends string, Q, B> = { user: string } & ([ParamNames<Path>] extends [never]
  ? unknown
  : { params: Record<ParamNames<Path>, string> }) &
  (Q extends ZodType ? { query: z.output<Q> } : unknown) &
  (B extends ZodType ? { body: z.output<B> } : unknown);

/**
 * One operation of an internal API, declared once: the route and the client's method both come
 * from it. `send` (client side) lays the API's arguments out as the call travels; `serve` (callee
 * side) answers that call, in the answer's wire shape; `read` (client side) turns the answer, once
 * checked against its schema, into the API's result, where the two shapes differ.
 */
export interface Declaration<F extends Fn, S, Path extends string, Q, B, A> {
  method: Method;
  /** With `:name` for each param. */
  path: Path;
  query?: Q;
  /** A JSON body's schema. */
  body?: B;
  /** The answer's schema; none for an empty answer (204). */
  answer?: A;
  /** 201 for a creation; otherwise 200, or 204 without an answer. */
  status?: 201;
  send: (...args: Parameters<F>) => Call<Path, Q, B>;
  serve: (server: S, call: Call<Path, Q, B>) => Promise<A extends ZodType ? z.input<A> : void>;
}

/** `read` is needed where the answer is not already the API's result; an empty answer only for a void one. */
type Reading<F extends Fn, A> = A extends ZodType
  ? z.output<A> extends Awaited<ReturnType<F>>
    ? { read?: (answer: z.output<A>) => Awaited<ReturnType<F>> }
    : { read: (answer: z.output<A>) => Awaited<ReturnType<F>> }
  : Awaited<ReturnType<F>> extends void
    ? unknown
    : { answer: "the API's method returns a value: declare the answer's schema" };

interface WireCall {
  user: string;
  params?: Record<string, string>;
  query?: unknown;
  body?: unknown;
}

/** A declared operation for an API method of type F, served by S; its types are checked where it is declared. */
export interface Operation<F extends Fn, S> {
  readonly method: Method;
  readonly path: string;
  readonly query?: QuerySchema;
  readonly body?: ZodType;
  readonly answer?: ZodType;
  readonly status?: 201;
  send(...args: Parameters<F>): WireCall;
  serve(server: S, call: WireCall): Promise<unknown>;
  read?(answer: unknown): unknown;
}

function operation<S>() {
  return <
    F extends Fn,
    Path extends string,
    Q extends QuerySchema | undefined = undefined,
    B extends ZodType | undefined = undefined,
    A = undefined,
  >(
    declaration: Declaration<F, S, Path, Q, B, A> & Reading<F, A>,
  ) => declaration as unknown as Operation<F, S>;
}

/**
 * An internal API declared once, one operation per method: its router (behind the service token
 * for `audience`) and a client class that implements the API over HTTP, every answer checked
 * against its schema. A method the declarations leave out, or declare with other arguments or
 * results than the API's, fails typecheck.
 */
export function internalService<Api extends Record<keyof Api, Fn>, S = Api>(
  audience: string,
  declare: (op: ReturnType<typeof operation<S>>) => { [K in keyof Api]: Operation<Api[K], S> },
) {
  const operations = Object.entries<Operation<Fn, S>>(declare(operation<S>()));

  function router(identity: ServiceIdentity, server: S): Router {
    const router = Router();
    const guard = identity.require(audience);
    const json = express.json({ limit: JSON_BODY_LIMIT });
    for (const [, op] of operations) {
      const parsers = op.body ? [json] : [];
      router[op.method.toLowerCase() as Lowercase<Method>](op.path, guard, ...parsers, async (req, res) => {
        const answer = await op.serve(server, {
          user: callerOf(res),
          params: req.params as Record<string, string>,
          query: op.query && fromGateway(op.query, req.query),
          body: op.body && fromGateway(op.body, req.body, "body"),
        });
        if (op.answer) res.status(op.status ?? 200).json(answer);
        else res.status(204).end();
      });
    }
    return router;
  }

  class Client {
    readonly client: ServiceClient;
    constructor(baseUrl: string, identity: ServiceIdentity) {
      this.client = new ServiceClient(baseUrl, audience, identity);
    }
  }
  for (const [name, op] of operations) {
    Object.defineProperty(Client.prototype, name, {
      writable: true,
      configurable: true,
      async value(this: Client, ...args: Parameters<Fn>) {
        const call = op.send(...args);
        let path = op.path.replace(/:(\w+)/g, (_, param: string) =>
          encodeURIComponent(call.params?.[param] ?? ""),
        );
        if (op.query) {
          const query = new URLSearchParams();
          for (const [key, value] of Object.entries(op.query.encode(call.query)))
            if (value !== undefined) query.set(key, value);
          if (query.size > 0) path += `?${query.toString()}`;
        }
        const init: CallInit = { method: op.method };
        if (op.body) {
          init.headers = { "Content-Type": "application/json" };
          init.body = JSON.stringify(op.body.encode(call.body));
        }
        if (!op.answer) {
          await this.client.request(call.user, path, init);
          return;
        }
        const answer = await this.client.json(call.user, path, op.answer, init);
        return op.read ? op.read(answer) : answer;
      },
    });
  }

  return {
    audience,
    router,
    Client: Client as new (baseUrl: string, identity: ServiceIdentity) => Api & Client,
  };
}
