/**
 * The one paging rule of every list in the API (README, "Paging"): ask with `limit`, and for a
 * later page with `cursor`, the previous page's `next_cursor`. Every page that has a next one also
 * names it whole in a `Link: <…>; rel="next"` header. No next cursor (and no Link): the last page.
 * The file list is a bare JSON array (the seed's shape), so its next cursor travels in the
 * `X-Next-Cursor` header instead of the body.
 *
 * Cursors are opaque. Lists in a fixed order for the request (search's ranking, a file's passages)
 * also keep the `offset` / `next_offset` they had before cursors; their cursor is that position.
 */
export const PAGE_CURSOR_MAX_LENGTH = 512;

const POSITION_PREFIX = "position:";

// btoa and atob, not Buffer: the dashboard's browser code uses these contracts too. Cursors hold
// ASCII only (ISO times, UUIDs, digits).
const toBase64Url = (text: string) => btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
function fromBase64Url(cursor: string): string | null {
  try {
    return atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    return null;
  }
}

/** The cursor of a position in a list in a fixed order (an offset). */
export function positionCursor(offset: number): string {
  return toBase64Url(`${POSITION_PREFIX}${offset}`);
}

/** The position a positionCursor names, or null when the cursor is not one. */
export function positionFromCursor(cursor: string): number | null {
  const text = fromBase64Url(cursor);
  if (text === null || !text.startsWith(POSITION_PREFIX)) return null;
  const digits = text.slice(POSITION_PREFIX.length);
  if (!/^\d{1,9}$/.test(digits)) return null;
  return Number(digits);
}

/**
 * The cursor of a row in a list that grows as it is read (files, deliveries, events), newest
 * first: the row's time and id, so rows added meanwhile never shift a page.
 */
export function keysetCursor(row: { at: string; id: string }): string {
  return toBase64Url(JSON.stringify([row.at, row.id]));
}

/** The row a keysetCursor names, or null when the cursor is not one. */
export function keysetFromCursor(cursor: string): { at: string; id: string } | null {
  const text = fromBase64Url(cursor);
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === "string" &&
      typeof value[1] === "string"
    )
      return { at: value[0], id: value[1] };
  } catch {
    // not JSON: a cursor Locus did not make
  }
  return null;
}

/** A positioned page's next-page fields: the offset and the same position as a cursor. */
export function nextPosition(next: number | null): {
  next_offset: number | null;
  next_cursor: string | null;
} {
  return { next_offset: next, next_cursor: next === null ? null : positionCursor(next) };
}

/** What each list's `next_cursor` says, for its schema. */
export const NEXT_CURSOR_TEXT =
  "Give it as `cursor` for the next page (the `Link` header holds that request whole); null on the last page.";
