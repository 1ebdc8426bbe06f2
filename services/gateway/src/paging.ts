import type { Request, Response } from "express";
import { METADATA_PARAM_PREFIX } from "./operations/files.ts";
import type { Operation } from "./operations/operation.ts";
import { allValues } from "./operations/rules.ts";

/** Where a page starts, said the older ways: the next page's link says it as `cursor` instead. */
const POSITION_PARAMS = new Set(["cursor", "offset", "before"]);

/**
 * The paging rule's `Link: <…>; rel="next"` (contracts/src/paging.ts): this request again, with
 * the same parameters the operation knows (its filters, `limit`, `q`…) and `cursor` where this
 * page ended. Nothing on the last page.
 */
export function setNextLink(
  op: Operation,
  req: Request,
  res: Response,
  baseUrl: string,
  nextCursor: string | null,
): void {
  if (nextCursor === null) return;
  const known = (name: string) =>
    Boolean(op.query?.[name]?.doc ?? op.filter?.rules[name]?.doc) ||
    (op.filter !== undefined && name.startsWith(METADATA_PARAM_PREFIX));
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(req.query)) {
    if (POSITION_PARAMS.has(name) || !known(name)) continue;
    for (const v of allValues(value)) params.append(name, v);
  }
  params.set("cursor", nextCursor);
  const path = new URL(req.originalUrl, "http://locus.invalid").pathname;
  res.setHeader("Link", `<${baseUrl}${path}?${params.toString()}>; rel="next"`);
}
