import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { hashPassword, passwordProblem } from "@locus/dashboard";
import { generateApiKey, hashApiKey, keyTypeOf } from "@locus/metadata-store";
import type { KeyType, MetadataStore, Plan } from "@locus/metadata-store";
import {
  ConfigError,
  createLogger,
  loadConfig,
  unnamedParts,
  type LocusConfig,
  type Part,
} from "@locus/runtime";
import { FileType } from "@locus/contracts";
import { rebuildSearchIndex } from "./index-rebuild.ts";
import { queueReextraction } from "./reextract.ts";
import { createMetadataStore, Infrastructure } from "./infrastructure.ts";
import {
  columns,
  deadLetters,
  migrateQueues,
  NoSuchFileError,
  OperatorError,
  printStatus,
  retryFile,
} from "./operator-commands.ts";

/**
 * Operator commands against the same data as the running server, through the same configuration
 * (SQLite in WAL mode, so both can work at once; or the shared Postgres):
 *   locus users create --email E [--plan free|pro|enterprise]
 *   locus users password --email E                          (the dashboard password, read from stdin)
 *   locus keys create --email E --type live|test [--name N]   (the key alone on the last line)
 *   locus keys list --email E
 *   locus keys revoke KEY_OR_ID
 *   locus migrate                                             (brings the schema up to date)
 *   locus index rebuild                                       (the search index, from stored extractions)
 *   locus files reextract [--kind K] [--email E]              (ready files extracted again from their originals)
 *   locus status                                              (dependencies, queues, stalled and failed files)
 *   locus files retry FILE_ID                                 (a failed or stalled file extracted again)
 *   locus dead-letters list|replay [--group G] [--limit N]    (RabbitMQ's dead letters, read or handed back)
 *   locus bus migrate-queues                                  (classic work queues made quorum queues)
 *
 * Each command names the parts it uses (partsUsedBy) and refuses settings that name a deployment's
 * shared parts but leave one of those to an embedded default (unnamedParts in config.ts), and
 * runs under LOCUS_CLI_TIMEOUT_S (see armDeadline).
 */
const USAGE = `Usage:
  pnpm locus users create --email E [--plan free|pro|enterprise]
  pnpm locus users password --email E      (reads the new dashboard password from standard input)
  pnpm locus keys create --email E --type live|test [--name N]
  pnpm locus keys list --email E
  pnpm locus keys revoke KEY_OR_ID
  pnpm locus migrate
  pnpm locus index rebuild
  pnpm locus files reextract [--kind pdf|image|audio|video|document] [--email E]
  pnpm locus status                        (exit code 1 when a dependency is unavailable)
  pnpm locus files retry FILE_ID
  pnpm locus dead-letters list|replay [--group G] [--limit N]
  pnpm locus bus migrate-queues            (with the consumers stopped; exit code 1 if any refused)
Exit codes: 0 done; 1 a dependency is down, or LOCUS_CLI_TIMEOUT_S (60 s) passed; 2 a mistake in
the command or the configuration; 3 no such file. Give the deployment's settings (LOCUS_SHAPE=split
and its connections for a split one).
`;

class UsageError extends Error {}

const PLANS: readonly Plan[] = ["free", "pro", "enterprise"];
const out = (line: string) => process.stdout.write(`${line}\n`);

function normaliseEmail(value: string | undefined): string {
  const email = value?.trim().toLowerCase();
  if (!email) throw new UsageError("--email is required");
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new UsageError(`"${value}" is not an email address`);
  return email;
}

async function userByEmail(store: MetadataStore, email: string) {
  const user = await store.findUserByEmail(email);
  if (!user)
    throw new UsageError(
      `No user with email ${email}; create one with: pnpm locus users create --email ${email}`,
    );
  return user;
}

function parseCommand(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      email: { type: "string" },
      plan: { type: "string" },
      type: { type: "string" },
      kind: { type: "string" },
      name: { type: "string" },
      group: { type: "string" },
      limit: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}
type Command = ReturnType<typeof parseCommand>;

/**
 * The parts of the deployment a command works on, beside the metadata store every one opens (it
 * migrates first): what its settings must name.
 */
function partsUsedBy({ positionals: [noun] }: Command): Part[] {
  if (noun === "status") return ["metadataStore", "bus", "blobStore", "searchIndex"];
  if (noun === "index") return ["metadataStore", "blobStore", "searchIndex"];
  if (noun === "files" || noun === "dead-letters" || noun === "bus") return ["metadataStore", "bus"];
  return ["metadataStore"];
}

/** Where a part is reached, for the deadline's sentence (never a password). */
function whereIs(config: LocusConfig, part: "metadataStore" | "bus" | "searchIndex"): string {
  const host = (url: string) => {
    const { protocol, host: at, pathname } = new URL(url);
    return `${protocol}//${at}${pathname === "/" ? "" : pathname}`;
  };
  if (part === "bus") return `RabbitMQ at ${config.amqpUrl ? host(config.amqpUrl) : "AMQP_URL"}`;
  const kind = config.adapters[part];
  if (kind === "postgres" && config.postgres) return `PostgreSQL at ${host(config.postgres.url)}`;
  if (kind === "elasticsearch") return "Elasticsearch";
  return `the SQLite ${part === "metadataStore" ? "store" : "index"} in ${config.dataDir}`;
}

/**
 * The command's deadline (LOCUS_CLI_TIMEOUT_S): when it passes, the command stops with exit code 1
 * and says what it was waiting for, whatever holds it (a database that accepts connections and
 * never answers, a broker that keeps refusing). `index rebuild` and `files reextract`, whose work
 * grows with the data, get it to reach their dependencies and then as long as their work takes
 * (`release`). The timer does not keep the process alive: a command that has finished exits.
 */
function armDeadline(config: LocusConfig, command: string) {
  const state = { waitingFor: "the command to finish" };
  const timer =
    config.cliTimeoutMs > 0
      ? setTimeout(() => {
          const seconds = config.cliTimeoutMs / 1000;
          process.stderr.write(
            `pnpm locus ${command}: gave up after ${seconds} s waiting for ${state.waitingFor} ` +
              `(LOCUS_CLI_TIMEOUT_S=${seconds}; 0 waits without limit)\n`,
          );
          process.exit(1);
        }, config.cliTimeoutMs).unref()
      : undefined;
  return {
    /** Says what the command waits for from now on. */
    waitingFor: (what: string) => {
      state.waitingFor = what;
    },
    release: () => clearTimeout(timer),
    /** A share of the deadline for one dependency, so the command can still report the others. */
    share: (fraction: number) =>
      config.cliTimeoutMs > 0 ? Math.min(30_000, Math.max(1000, config.cliTimeoutMs * fraction)) : undefined,
  };
}
type Deadline = ReturnType<typeof armDeadline>;

/** Runs one command; resolves its exit code (0, or 1 when `status` finds a dependency down). */
async function run(
  store: MetadataStore,
  config: LocusConfig,
  { values, positionals }: Command,
  deadline: Deadline,
): Promise<number> {
  const [noun, verb, arg] = positionals;
  if (values.help || !noun) {
    out(USAGE.trimEnd());
    return 0;
  }
  const infrastructure = () =>
    new Infrastructure(config, createLogger("locus-cli", "warn"), deadline.share(1 / 3));

  if (noun === "index" && verb === "rebuild") {
    const infra = infrastructure();
    try {
      deadline.waitingFor(whereIs(config, "searchIndex"));
      const index = await infra.searchIndex();
      deadline.waitingFor("the embedding engines to load");
      const embedders = await infra.embedders("indexing");
      deadline.release();
      const result = await rebuildSearchIndex(store, infra.blobs(), index, embedders, (line) => out(line));
      out(
        `Rebuilt the ${config.adapters.searchIndex} search index from ${result.files} stored extractions ` +
          `(${result.passages} passages), without extracting anything again.`,
      );
      if (result.missing.length > 0) {
        out(
          `${result.missing.length} ready files have no stored extraction (upload them again): ${result.missing.join(", ")}`,
        );
      }
    } finally {
      await infra.close();
    }
    return 0;
  }

  if (noun === "files" && verb === "reextract") {
    const kind = values.kind === undefined ? undefined : FileType.safeParse(values.kind);
    if (kind && !kind.success) throw new UsageError(`--kind must be one of ${FileType.options.join(", ")}`);
    const user =
      values.email === undefined ? undefined : await userByEmail(store, normaliseEmail(values.email));
    const infra = infrastructure();
    try {
      // A shared bus reaches the running extractors now; the in-process one dies with this command.
      const shared = config.adapters.bus === "rabbitmq";
      deadline.waitingFor(whereIs(config, "bus"));
      const bus = shared ? await infra.messageBus() : null;
      deadline.release();
      const { queued } = await queueReextraction(store, bus, { kind: kind?.data, userId: user?.id }, (line) =>
        out(line),
      );
      out(
        shared
          ? `Queued ${queued} ready files to be extracted again; each is searchable again once it is ready.`
          : `Marked ${queued} ready files to be extracted again: start (or restart) the server with pnpm start ` +
              "and it extracts them; each is searchable again once it is ready.",
      );
    } finally {
      await infra.close();
    }
    return 0;
  }

  if (
    noun === "status" ||
    (noun === "files" && verb === "retry") ||
    noun === "dead-letters" ||
    (noun === "bus" && verb === "migrate-queues")
  ) {
    const infra = infrastructure();
    try {
      if (noun === "status") {
        return (await printStatus(infra, store, config, out, (part) =>
          deadline.waitingFor(whereIs(config, part)),
        ))
          ? 0
          : 1;
      }
      deadline.waitingFor(whereIs(config, "bus"));
      if (noun === "bus") return (await migrateQueues(infra, config, out)) ? 0 : 1;
      if (noun === "files") {
        if (!arg) throw new UsageError("Give the file's id: pnpm locus files retry FILE_ID");
        out(await retryFile(infra, store, config, arg));
        return 0;
      }
      await deadLetters(infra, store, config, verb, { group: values.group, limit: values.limit }, out);
      return 0;
    } finally {
      deadline.waitingFor("the connections to close");
      await infra.close();
    }
  }

  if (noun === "migrate") {
    // Every command migrates first (see below); this one only reports it, for deploy pipelines.
    out("The metadata schema is up to date.");
    return 0;
  }

  if (noun === "users" && verb === "create") {
    const email = normaliseEmail(values.email);
    const plan = (values.plan ?? "free") as Plan;
    if (!PLANS.includes(plan)) throw new UsageError(`--plan must be one of ${PLANS.join(", ")}`);
    if (await store.findUserByEmail(email)) throw new UsageError(`A user with email ${email} already exists`);
    const user = await store.createUser({ email, plan });
    out(`Created user ${user.email} (id ${user.id}, plan ${user.plan})`);
    return 0;
  }

  if (noun === "users" && verb === "password") {
    const user = await userByEmail(store, normaliseEmail(values.email));
    // From standard input, never an argument: arguments end up in shell history and `ps`.
    deadline.waitingFor("the new password on standard input");
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
    let password = "";
    for await (const line of lines) {
      password = line;
      break;
    }
    lines.close();
    const problem = passwordProblem(password, user.email);
    if (problem) throw new UsageError(problem);
    await store.setPasswordHash(user.id, await hashPassword(password));
    out(`Set the dashboard password of ${user.email}; they can sign in at /dashboard.`);
    return 0;
  }

  if (noun === "keys" && verb === "create") {
    const user = await userByEmail(store, normaliseEmail(values.email));
    const type = values.type as KeyType | undefined;
    if (type !== "live" && type !== "test") throw new UsageError("--type must be live or test");
    const name = values.name?.trim() || `${type} key`;
    const generated = generateApiKey(type);
    const key = await store.createKey({
      userId: user.id,
      name,
      type,
      displayPrefix: generated.displayPrefix,
      hash: generated.hash,
    });
    out(`Created ${type} key "${key.name}" (id ${key.id}) for ${user.email}.`);
    out("Copy it now: it is stored only as a hash and cannot be shown again.");
    out(generated.key);
    return 0;
  }

  if (noun === "keys" && verb === "list") {
    const user = await userByEmail(store, normaliseEmail(values.email));
    const keys = await store.listKeys(user.id);
    if (keys.length === 0) {
      out(`${user.email} has no keys.`);
      return 0;
    }
    const rows = [
      ["ID", "NAME", "PREFIX", "TYPE", "CREATED", "LAST USED", "REVOKED"],
      ...keys.map((k) => [
        k.id,
        k.name,
        `${k.displayPrefix}…`,
        k.type,
        k.createdAt,
        k.lastUsedAt ?? "-",
        k.revokedAt ?? "-",
      ]),
    ];
    for (const line of columns(rows)) out(line);
    return 0;
  }

  if (noun === "keys" && verb === "revoke") {
    if (!arg) throw new UsageError("Give the key, or its id from `pnpm locus keys list`");
    const revoked = keyTypeOf(arg)
      ? await store.revokeKey({ hash: hashApiKey(arg) })
      : await store.revokeKey({ id: arg });
    if (!revoked) throw new UsageError("No active key matches (it may already be revoked)");
    out(`Revoked ${revoked.type} key "${revoked.name}" (id ${revoked.id}); requests using it now get 401.`);
    return 0;
  }

  throw new UsageError(`Unknown command: ${positionals.join(" ")}`);
}

let code = 0;
let store: MetadataStore | undefined;
let said = "";
try {
  const command = parseCommand(process.argv.slice(2));
  said = command.positionals.slice(0, 2).join(" ") || "help";
  const config = loadConfig();
  // Before the store is opened: a refused command leaves no SQLite files behind.
  const refusal = unnamedParts(config, process.env, partsUsedBy(command));
  if (refusal) throw new ConfigError([refusal]);
  const deadline = armDeadline(config, said);
  deadline.waitingFor(whereIs(config, "metadataStore"));
  store = createMetadataStore(config);
  await store.migrate();
  deadline.waitingFor("the command to finish");
  code = await run(store, config, command, deadline);
} catch (err) {
  if (err instanceof UsageError || err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n${err instanceof UsageError ? USAGE : ""}`);
    code = 2;
  } else if (err instanceof OperatorError) {
    // The command was understood; what it names cannot be done: its sentence, not the usage.
    process.stderr.write(`${err.message}\n`);
    code = err instanceof NoSuchFileError ? 3 : 2;
  } else if (err instanceof TypeError && (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
    process.stderr.write(`${err.message}\n${USAGE}`);
    code = 2;
  } else {
    // A dependency that failed (its own timeout, a refused connection): said, not a stack trace.
    process.stderr.write(`pnpm locus ${said}: ${err instanceof Error ? err.message : String(err)}\n`);
    code = 1;
  }
} finally {
  await store?.close();
}
process.exitCode = code;
