import { sql, type RawBuilder, type SqlBool } from "kysely";
import { keysetFromCursor } from "@locus/contracts";

/**
 * The rows after a keyset cursor's row in newest-first order (`time desc, id desc`), for every
 * list paged that way (files, deliveries, events). A cursor Locus did not make matches nothing:
 * the gateway refuses those first, so only a caller bypassing it could send one.
 */
export function afterCursor(cursor: string, timeColumn: string, idColumn = "id"): RawBuilder<SqlBool> {
  const row = keysetFromCursor(cursor);
  if (!row) return sql<SqlBool>`1 = 0`;
  const time = sql.ref(timeColumn);
  const id = sql.ref(idColumn);
  return sql<SqlBool>`(${time} < ${row.at} or (${time} = ${row.at} and ${id} < ${row.id}))`;
}
