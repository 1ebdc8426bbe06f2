/**
 * One declaration per public operation (method, path, parameters with their rules, body and
 * responses), from which come its /openapi.json entry (openApiPaths), the checks of a request that
 * answer as FastAPI does (parseRequest) and its express route (routes.ts).
 */
import { apiSchemaRef, type ApiSchemaName } from "@locus/contracts";
import { missing, RequestValidationError, type Rule, type ValidationIssue } from "./rules.ts";

type Rules = Record<string, Rule<unknown>>;
type Values<R extends Rules> = { [K in keyof R]: R[K] extends Rule<infer T> ? T : never };

/** A group of query parameters checked after the others, whose values make one thing (a filter). */
export interface Group<T> {
  rules: Rules;
  build(values: Record<string, unknown>): T;
}

/** A JSON body: an object of fields, some required, some with a default. */
export interface JsonBody<T> {
  fields: Rules;
  required: string[];
  /** No body at all is fine (FastAPI's `Body(None)`): the defaults then. */
  optional?: boolean;
  defaults?: Record<string, unknown>;
  /** Only for the type of what parseRequest returns. */
  type?: T;
}

export interface Operation<P extends Rules = Rules, Q extends Rules = Rules, F = unknown, B = unknown> {
  method: "get" | "post" | "patch" | "delete";
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** Path parameters, checked first. */
  params?: P;
  /** Query parameters, checked next, all at once, in this order. */
  query?: Q;
  filter?: Group<F>;
  body?: JsonBody<B>;
  /** A body checked elsewhere (a multipart upload): only what /openapi.json says of it. */
  requestBody?: object;
  /** The answers besides 401, 429 and (for an operation that takes anything) 422. */
  responses: Record<string, object>;
}

export type Input<O> =
  O extends Operation<infer P, infer Q, infer F, infer B>
    ? Values<P> & Values<Q> & { filter: F | undefined; body: B }
    : never;

type None = Record<never, never>;

export const operation = <P extends Rules = None, Q extends Rules = None, F = undefined, B = undefined>(
  o: Operation<P, Q, F, B>,
) => o;

/** Checks one place's parameters (or a body's fields), reporting every bad one at once. */
function check(
  rules: Rules,
  where: "path" | "query" | "body",
  source: Record<string, unknown>,
  sandbox: boolean,
  body?: JsonBody<unknown>,
): Record<string, unknown> {
  const issues: ValidationIssue[] = [];
  const values: Record<string, unknown> = {};
  for (const [name, rule] of Object.entries(rules)) {
    const raw = source[name];
    if (body && raw === undefined) {
      if (body.required.includes(name)) issues.push(missing([where, name], source));
      if (body.defaults?.[name] !== undefined) values[name] = body.defaults[name];
      continue;
    }
    const value = rule.parse(raw, [where, name], issues, { source, sandbox });
    if (value !== undefined) values[name] = value;
  }
  if (issues.length > 0) throw new RequestValidationError(issues);
  return values;
}

/** The body as an object, or the issue pydantic reports for a body that is not one. */
function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) throw new RequestValidationError([missing(["body"])]);
  if (typeof body !== "object" || Array.isArray(body)) {
    const msg = "Input should be a valid dictionary or object to extract fields from";
    throw new RequestValidationError([{ type: "model_attributes_type", loc: ["body"], msg, input: body }]);
  }
  return body as Record<string, unknown>;
}

/**
 * A request's values by the operation's rules, or a RequestValidationError with pydantic's issues:
 * the path's, else the query's, else the filter's, else the body's. A test key (`sandbox`) may
 * name the sandbox's examples where a UUID is due.
 */
export function parseRequest<O extends Operation>(
  op: O,
  req: { params?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown },
  sandbox = false,
): Input<O> {
  const params = check(op.params ?? {}, "path", req.params ?? {}, sandbox);
  const query = check(op.query ?? {}, "query", req.query ?? {}, sandbox);
  const filter = op.filter?.build(check(op.filter.rules, "query", req.query ?? {}, sandbox));
  const absent = req.body === undefined || req.body === null;
  const source = op.body?.optional && absent ? {} : req.body;
  const body = op.body ? check(op.body.fields, "body", bodyObject(source), sandbox, op.body) : undefined;
  return { ...params, ...query, filter, body } as Input<O>;
}

export const json = (name: ApiSchemaName) => ({
  "application/json": { schema: { $ref: apiSchemaRef(name) } },
});

/** A success answer: its description, headers and schema. */
export const ok = (description: string, schema: ApiSchemaName, headers?: object) => ({
  description,
  ...(headers ? { headers } : {}),
  content: json(schema),
});

export const errorResponse = (description: string, headers?: object) =>
  ok(description, "ErrorMessage", headers);

export const rateLimitHeaders = {
  "RateLimit-Limit": { description: "Requests per second the plan allows.", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Requests left in the current second.", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until the window resets.", schema: { type: "integer" } },
};

/** Every list's next page, whole (the paging rule: contracts/src/paging.ts). */
export const nextLink = {
  Link: {
    description: 'The next page\'s request, whole, as `<url>; rel="next"`; absent on the last page.',
    schema: { type: "string" },
  },
};

const commonErrors = {
  "401": errorResponse("Missing, malformed, unknown or revoked API key.", {
    "WWW-Authenticate": { schema: { type: "string" }, description: "Bearer challenge." },
  }),
  "429": errorResponse("The plan's rate limit (or, for uploads, the monthly quota) is used up.", {
    "Retry-After": { schema: { type: "integer" }, description: "Seconds to wait before retrying." },
    ...rateLimitHeaders,
  }),
};

const validationError = {
  description: "A parameter breaks its rules (FastAPI/pydantic v2 format).",
  content: json("HTTPValidationError"),
};

const parameters = (where: "path" | "query", rules: Rules = {}) =>
  Object.entries(rules).flatMap(([name, rule]) => (rule.doc ? [{ name, in: where, ...rule.doc }] : []));

/** An operation's /openapi.json entry. */
function describe(op: Operation) {
  const params = [
    ...parameters("path", op.params),
    ...parameters("query", op.query),
    ...parameters("query", op.filter?.rules),
  ];
  const schema = op.body && {
    type: "object",
    required: op.body.required,
    properties: Object.fromEntries(Object.entries(op.body.fields).map(([name, rule]) => [name, rule.doc])),
  };
  const takesInput = params.length > 0 || op.body !== undefined || op.requestBody !== undefined;
  return {
    operationId: op.operationId,
    summary: op.summary,
    ...(op.description === undefined ? {} : { description: op.description }),
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(schema
      ? { requestBody: { required: !op.body?.optional, content: { "application/json": { schema } } } }
      : {}),
    ...(op.requestBody ? { requestBody: op.requestBody } : {}),
    // Status codes are integer keys: JavaScript keeps them in ascending order, as the document lists them.
    responses: { ...op.responses, ...commonErrors, ...(takesInput ? { "422": validationError } : {}) },
  };
}

/** The `paths` of /openapi.json: each operation under its path, in the order given. */
export function openApiPaths(operations: readonly Operation[]) {
  const paths: Record<string, Record<string, ReturnType<typeof describe>>> = {};
  for (const op of operations) (paths[op.path] ??= {})[op.method] = describe(op);
  return paths;
}
