import pg from "pg";
import {
  Kysely,
  PostgresDialect,
  sql,
  type PostgresCursor,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
} from "kysely";
import { KyselyMetadataStore } from "./kysely-metadata-store.ts";
import { listenForPostgresKeyChanges } from "./postgres-key-changes.ts";
import type { Database } from "./schema.ts";

export interface PostgresMetadataStoreOptions {
  /** `postgres://user:password@host:port/database`, as pg reads it. */
  connectionString: string;
  /**
   * The Postgres schema that holds every table, created by migrate() when missing, so tests and
   * several deployments can share one database. Lower-case letters, digits and underscores.
   * Default: `public`.
   */
  schema?: string;
  /** Most connections this process opens. Default: 10. */
  poolSize?: number;
  /** The server cancels a statement that runs longer than this. Migrations are exempt. Default: 30 s. */
  statementTimeoutMillis?: number;
  /**
   * How long to wait for a connection, new or pooled, and for check() to answer. Short, so that
   * /readyz reports an unreachable server at once. Default: 2 s.
   */
  connectionTimeoutMillis?: number;
  /** Told when an idle pooled connection breaks (the server went away); the pool replaces it. */
  onConnectionError?: (error: Error) => void;
}

const DEFAULT_SCHEMA = "public";
const DEFAULT_POOL_SIZE = 10;
const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
const DEFAULT_CONNECTION_TIMEOUT_MS = 2_000;
/**
 * The client gives up on an answer this long after the server should have cancelled the statement
 * itself: only a server that is gone or frozen (no reset, no answer) gets that far.
 */
const QUERY_TIMEOUT_MARGIN_MS = 5_000;
/** Probes an idle connection after this long, so a vanished server is noticed while idle too. */
const KEEP_ALIVE_DELAY_MS = 10_000;
const INT8_OID = 20;
/** Unquoted Postgres identifiers only: the name goes into a `-c search_path=` startup option. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The split-mode metadata store: the shared Kysely data layer over a pg pool. Every connection
 * starts with `search_path` set to the configured schema, so the dialect-neutral queries and
 * migrations need no schema names. Call migrate() once per process at start; concurrent calls from
 * several processes are serialised by Kysely's Postgres advisory lock.
 */
export function createPostgresMetadataStore(options: PostgresMetadataStoreOptions): KyselyMetadataStore {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(
      `The metadata schema name "${schema}" is not usable: use lower-case letters, digits and underscores, starting with a letter or underscore (at most 63).`,
    );
  }
  const statementTimeout = options.statementTimeoutMillis ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const connectionTimeout = options.connectionTimeoutMillis ?? DEFAULT_CONNECTION_TIMEOUT_MS;
  const onError = options.onConnectionError ?? (() => {});
  const base = baseConfig(options.connectionString, schema, connectionTimeout);

  const db = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: new GuardedPool(
        new pg.Pool({
          ...base,
          max: options.poolSize ?? DEFAULT_POOL_SIZE,
          statement_timeout: statementTimeout,
          query_timeout: statementTimeout + QUERY_TIMEOUT_MARGIN_MS,
        }),
        onError,
      ),
    }),
  });

  return new KyselyMetadataStore(db, {
    // Kysely would otherwise find another schema's bookkeeping tables in the same database.
    migrationTableSchema: schema,
    checkTimeoutMillis: connectionTimeout,
    listenForKeyChanges: (listener) => listenForPostgresKeyChanges(base, schema, listener),
    async runMigrations(migrate) {
      // A connection of its own, without the statement timeout: a schema change may rewrite a big
      // table, and a process that starts while another migrates waits on Kysely's advisory lock
      // (up to the hour Kysely allows) instead of failing after 30 s.
      const migrationDb = new Kysely<Database>({
        dialect: new PostgresDialect({
          pool: new GuardedPool(new pg.Pool({ ...base, max: 1, statement_timeout: 0 }), onError),
        }),
      });
      try {
        await ensureSchema(migrationDb, schema);
        // Kysely looks for its migration table by listing every table of the database, and a
        // schema (or table) that another client drops during that listing fails it ("schema … does
        // not exist"; seen when the tests of other stores share the database). Nothing has run
        // then (and Postgres migrations run in a transaction): tried again, up to three times.
        for (let attempt = 1; ; attempt++) {
          try {
            await migrate(migrationDb);
            break;
          } catch (error) {
            if (attempt >= 3 || !schemaVanished(error)) throw error;
            await ensureSchema(migrationDb, schema);
          }
        }
      } finally {
        await migrationDb.destroy();
      }
    },
  });
}

function baseConfig(connectionString: string, schema: string, connectionTimeout: number): pg.PoolConfig {
  // A type parser set on this pool only: pg's global parsers belong to every library in the process.
  const types = new pg.TypeOverrides();
  types.setTypeParser(INT8_OID, parseInt8);
  return {
    ...withStartupOptions(connectionString, `-c search_path=${schema}`),
    types,
    application_name: "locus",
    connectionTimeoutMillis: connectionTimeout,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEP_ALIVE_DELAY_MS,
  };
}

/**
 * pg lets parameters in the connection string override the pool's settings, so an `options`
 * parameter in DATABASE_URL would silently drop our search_path. Merge the two instead, ours last
 * so that it wins.
 */
function withStartupOptions(
  connectionString: string,
  ours: string,
): { connectionString: string; options: string } {
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    return { connectionString, options: ours };
  }
  const theirs = url.searchParams.get("options");
  if (theirs === null) return { connectionString, options: ours };
  url.searchParams.delete("options");
  return { connectionString: url.toString(), options: `${theirs} ${ours}` };
}

/** int8 as a number (sizes, counts), refusing values a number cannot hold exactly. */
function parseInt8(value: string): number {
  const n = Number(value);
  // Thrown inside pg's row parser, this rejects the query rather than returning a wrong number.
  if (!Number.isSafeInteger(n)) throw new RangeError(`The bigint ${value} is too large for this store`);
  return n;
}

/** PostgreSQL's invalid_schema_name (3F000) or undefined_table (42P01), as the cause of a failed migration. */
const schemaVanished = (error: unknown): boolean => {
  const code = error instanceof Error ? (error.cause as { code?: unknown } | undefined)?.code : undefined;
  return code === "3F000" || code === "42P01";
};

async function ensureSchema(db: Kysely<Database>, schema: string): Promise<void> {
  const exists = async () => {
    const { rows } = await sql<{ found: boolean }>`
      select exists (select 1 from pg_namespace where nspname = ${schema}) as found`.execute(db);
    return rows[0]?.found === true;
  };
  // Checked first so a role without CREATE on the database can use a schema made for it.
  if (await exists()) return;
  try {
    await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  } catch (error) {
    // Two processes creating it at once: `if not exists` does not stop the loser from failing.
    if (!(await exists())) throw error;
  }
}

/**
 * The pg pool as Kysely sees it, with two guards pg lacks. A client whose connection failed or
 * whose query timed out goes back with an error so that the pool destroys it: pg would hand it out
 * again, still waiting for the lost answer. And every client always has an error listener: pg emits
 * 'error' on a checked-out client whose connection drops between two queries, and an unheard
 * 'error' event ends the process.
 */
class GuardedPool implements PostgresPool {
  readonly #clients = new WeakMap<pg.PoolClient, GuardedClient>();

  constructor(
    private readonly pool: pg.Pool,
    onError: (error: Error) => void,
  ) {
    // Errors of idle clients: the pool has already dropped the client; queries reconnect.
    pool.on("error", onError);
  }

  async connect(): Promise<PostgresPoolClient> {
    const client = await this.pool.connect();
    // One wrapper per pg client: Kysely keeps its connection objects by client identity.
    let guarded = this.#clients.get(client);
    if (!guarded) {
      guarded = new GuardedClient(client);
      this.#clients.set(client, guarded);
    }
    return guarded;
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

class GuardedClient implements PostgresPoolClient {
  #broken: Error | undefined;

  constructor(private readonly client: pg.PoolClient) {
    client.on("error", (error) => {
      this.#broken ??= error;
    });
  }

  query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(
    sqlOrCursor: string | PostgresCursor<R>,
    parameters?: readonly unknown[],
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // The dialect is built without a cursor class, so Kysely never streams.
    if (typeof sqlOrCursor !== "string") throw new Error("Cursors are not supported by this store");
    return this.#run<R>(sqlOrCursor, parameters ?? []);
  }

  async #run<R>(text: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>> {
    if (this.#broken) {
      // Fail at once (a rollback after a timeout, say) instead of queueing behind the lost query.
      throw new Error(`The connection to Postgres was lost: ${this.#broken.message}`, {
        cause: this.#broken,
      });
    }
    try {
      const result = await this.client.query(text, [...parameters]);
      // pg's own result type is looser (any command, rowCount null for commands without rows);
      // Kysely reads rowCount only for INSERT, UPDATE, DELETE and MERGE, where pg always sets it.
      return result as unknown as PostgresQueryResult<R>;
    } catch (error) {
      // A DatabaseError is the server's answer and leaves the connection usable; anything else
      // (timeout, reset, terminated) leaves it in an unknown state.
      if (!(error instanceof pg.DatabaseError)) {
        this.#broken ??= error instanceof Error ? error : new Error(String(error));
      }
      throw error;
    }
  }

  release(): void {
    // A truthy argument makes the pool destroy the client rather than keep it.
    this.client.release(this.#broken ?? false);
  }
}
