// A passage's terms as the FTS5 table indexes them: tenant-prefixed, by spaces, and counted back.

import { createHash } from "node:crypto";
import { indexTerms } from "./search-index.ts";

/**
 * Each user's words are indexed as distinct terms: "<tenant>_<word>". A query then reads only the
 * caller's postings, so tenancy is enforced inside the engine and a search costs what the
 * caller's matches cost, not what the caller's (or everyone's) whole collection costs. The tenant
 * is a hash of the user id, short to keep the terms small; results are still checked against
 * user_id, so even a hash collision could never show one user another's passages.
 */
export const tenantOf = (userId: string) =>
  `t${createHash("sha256").update(userId).digest("hex").slice(0, 12)}`;

/** A passage's terms as the FTS5 table indexes them: each with the tenant prefix, by spaces. */
export const tenantText = (tenant: string, terms: readonly string[]) =>
  terms.map((t) => `${tenant}_${t}`).join(" ");

export const indexedText = (tenant: string, content: string) => tenantText(tenant, indexTerms(content));

/**
 * How often each of `wanted` occurs in a passage's space-separated terms: searched for, rather
 * than splitting the whole string (a passage has ~50 terms, each with its tenant prefix).
 */
export function termFrequencies(terms: string, wanted: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of wanted) {
    let n = 0;
    for (let at = terms.indexOf(term); at !== -1; at = terms.indexOf(term, at + term.length)) {
      const end = at + term.length;
      if ((at === 0 || terms[at - 1] === " ") && (end === terms.length || terms[end] === " ")) n += 1;
    }
    counts.set(term, n);
  }
  return counts;
}
