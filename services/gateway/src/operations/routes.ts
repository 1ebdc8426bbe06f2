import express, {
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from "express";
import { Errors } from "@locus/contracts";
import { methodNotAllowed } from "@locus/http";
import { principalOf, type Principal } from "../authenticate.ts";
import { parseRequest, type Input, type Operation } from "./operation.ts";
import { RequestValidationError } from "./rules.ts";

/** What answers an operation, given the request's values checked by its declaration. */
export type Handler<O> = (
  input: Input<O>,
  principal: Principal,
  req: Request,
  res: Response,
  next: NextFunction,
) => unknown;

export interface Route {
  op: Operation;
  handler: Handler<never>;
}

/** An operation and what answers it. */
export const on = <O extends Operation>(op: O, handler: Handler<O>): Route => ({
  op,
  handler: handler as Handler<never>,
});

const BODY_LIMIT = "16kb";

/**
 * JSON bodies, whatever their Content-Type says (as FastAPI reads a body model); one that does
 * not parse is a `json_invalid` 422, as FastAPI answers.
 */
function jsonBody(): RequestHandler {
  const parse = express.json({ limit: BODY_LIMIT, type: () => true, strict: false });
  return (req, res, next) => {
    parse(req, res, (err?: unknown) => {
      const type = (err as { type?: string } | undefined)?.type;
      if (!err) next();
      else if (type === "entity.too.large") next(Errors.jsonBodyTooLarge(BODY_LIMIT));
      // Anything else body-parser refuses (a body that does not parse, an unknown charset, a
      // malformed Content-Type) is a body that is not JSON: FastAPI says so the same way.
      else if (typeof type === "string") {
        const issue = { type: "json_invalid", loc: ["body", 0], msg: "JSON decode error", input: {} };
        next(new RequestValidationError([{ ...issue, ctx: { error: "Expecting value" } }]));
      } else next(err);
    });
  };
}

/**
 * Mounts each operation at its path behind `guard` (authentication, rate limits), in the order
 * given: its request checked by its declaration, a JSON body read first when it has one. Other
 * methods on the path are a 405 naming the ones it has.
 */
export function mountRoutes(app: Router, guard: RequestHandler[], routes: Route[]): void {
  const paths = new Map<string, Route[]>();
  for (const route of routes) paths.set(route.op.path, [...(paths.get(route.op.path) ?? []), route]);
  for (const [path, onPath] of paths) {
    const route = app.route(path.replace(/\{(\w+)\}/g, ":$1"));
    for (const { op, handler } of onPath) {
      route[op.method](...guard, ...(op.body ? [jsonBody()] : []), (req, res, next) => {
        const principal = principalOf(res);
        const input = parseRequest(op, req, principal.sandbox) as never;
        return handler(input, principal, req, res, next);
      });
    }
    const methods = onPath.map(({ op }) => (op.method === "get" ? "GET, HEAD" : op.method.toUpperCase()));
    route.all(methodNotAllowed(methods.join(", ")));
  }
}
