// docker-compose: the rendered compose file against Locus's configuration rules and its own references.
import {
  CALLED_TARGETS,
  EGRESS_LIMITED_TARGETS,
  locusConfigProblems,
  requiredTargets,
  SPLIT_TARGETS,
} from "./locus.ts";
import type { Obj } from "./yaml.ts";
import { at, isObj, list, loadYamlDocuments, obj, show, text } from "./yaml.ts";

// ---------------------------------------------------------------------------------------------
// docker-compose: the output of `docker-compose config` (every variable and anchor resolved)

function composePorts(service: Obj): { published: string; target: string }[] {
  return list(service.ports).map((p) => {
    if (isObj(p)) return { published: show(p.published ?? ""), target: show(p.target ?? "") };
    // "[ip:]published:target[/proto]" or "target"
    const parts = show(p)
      .replace(/\/\w+$/, "")
      .split(":");
    return { published: parts.length > 1 ? (parts.at(-2) ?? "") : "", target: parts.at(-1) ?? "" };
  });
}

function composeEnv(service: Obj): Record<string, string> {
  const raw = service.environment;
  const env: Record<string, string> = {};
  if (Array.isArray(raw)) {
    for (const item of raw) {
      const s = show(item);
      const eq = s.indexOf("=");
      if (eq > 0) env[s.slice(0, eq)] = s.slice(eq + 1);
    }
  } else {
    for (const [k, v] of Object.entries(obj(raw))) if (v !== null && v !== undefined) env[k] = show(v);
  }
  return env;
}

/**
 * `file` is what `docker-compose config` rendered with the given `profiles` turned on (1.29's
 * `config` lists every service, whatever its profiles): a service of a profile that is off does
 * not run, so its target and environment are not this rendering's.
 */
export function checkCompose(
  file: string,
  imageEnv: Record<string, string>,
  profiles: readonly string[] = [],
): string[] {
  const problems: string[] = [];
  const tag = profiles.length > 0 ? `[compose --profile ${profiles.join(",")}]` : "[compose]";
  const { docs, errors } = loadYamlDocuments(file);
  for (const e of errors) problems.push(`${tag} YAML: ${e}`);
  const services = obj(at(docs[0], "services"));
  const names = Object.keys(services);
  const svc = (name: string) => obj(services[name]);
  const runs = (name: string) => {
    const own = list(svc(name).profiles).map(show);
    return own.length === 0 || own.some((p) => profiles.includes(p));
  };
  const isLocus = (s: Obj) =>
    text(s.image)?.startsWith("locus:") === true ||
    /deploy\/Dockerfile$/.test(text(at(s, "build", "dockerfile")) ?? "");
  // A service without `networks` is on the default one.
  const networksOf = (s: Obj) => {
    const n = s.networks;
    if (Array.isArray(n)) return n.map(show);
    return isObj(n) ? Object.keys(n) : ["default"];
  };
  const hasHealthcheck = (s: Obj) => {
    const test = list(at(s, "healthcheck", "test")).map(String);
    return at(s, "healthcheck", "disable") !== true && test.length > 0 && test[0] !== "NONE";
  };

  // Infrastructure the issue asks for.
  const byImage = (re: RegExp) => names.filter((n) => re.test(text(svc(n).image) ?? ""));
  const required: [string, RegExp][] = [
    ["RabbitMQ with the management UI", /(^|\/)rabbitmq:[^ ]*management/],
    ["Postgres 15", /(^|\/)postgres:15/],
    ["an S3-compatible store (MinIO)", /(^|\/)minio\/minio:/],
    ["Elasticsearch 8", /elasticsearch\/elasticsearch:8\./],
    ["Redis", /(^|\/)redis:/],
  ];
  for (const [what, re] of required) {
    if (byImage(re).length === 0) problems.push(`${tag} no service runs ${what}`);
  }

  const locus = names.filter((n) => isLocus(svc(n)) && runs(n));
  const targetOf = new Map<string, string>();
  let migrate: string | undefined;
  for (const name of locus) {
    const s = svc(name);
    const w = `${tag} ${name}`;
    const env = { ...imageEnv, ...composeEnv(s) };
    for (const p of locusConfigProblems(env)) problems.push(`${w}: Locus would refuse to start: ${p}`);
    const command = list(s.command).map(String);
    if (command.join(" ").endsWith("cli.js migrate")) {
      migrate = name;
      continue;
    }
    const targets = (env.LOCUS_TARGETS ?? "all").split(",").map((t) => t.trim());
    const target = targets[0] ?? "";
    if (targets.length !== 1 || !(SPLIT_TARGETS as readonly string[]).includes(target)) {
      problems.push(
        `${w}: LOCUS_TARGETS must name one of ${SPLIT_TARGETS.join(", ")}, got "${targets.join(",")}"`,
      );
    } else if ([...targetOf.values()].includes(target)) {
      problems.push(`${w}: another service already runs ${target}`);
    } else {
      targetOf.set(name, target);
    }
    if (
      !list(at(s, "healthcheck", "test"))
        .map(String)
        .join(" ")
        .includes("/healthz") ||
      !hasHealthcheck(s)
    ) {
      problems.push(`${w}: needs a healthcheck on /healthz`);
    }
    // Only the gateway is public, on 8080.
    const ports = composePorts(s);
    if (target === "gateway") {
      if (!ports.some((p) => p.published === "8080" && p.target === (env.PORT ?? "8080"))) {
        problems.push(`${w}: must publish 8080 to its PORT ${env.PORT ?? "8080"}`);
      }
    } else if (ports.length > 0) {
      problems.push(`${w}: an internal service must not publish ports`);
    }
    // Hosts in the connection settings are services of this file.
    for (const key of [
      "DATABASE_URL",
      "AMQP_URL",
      "REDIS_URL",
      "S3_ENDPOINT",
      "LOCUS_FILES_URL",
      "LOCUS_SEARCH_URL",
    ]) {
      if (!env[key]) continue;
      const host = new URL(env[key]).hostname;
      if (!names.includes(host)) problems.push(`${w}: ${key} points at ${host}, not a service of this file`);
      else if (!text(at(s, "depends_on", host, "condition"))) {
        problems.push(`${w}: ${key} uses ${host}, but depends_on does not wait for it`);
      } else if (
        // Only gateways count requests in Redis; the other targets are given its URL, unused.
        (key !== "REDIS_URL" || target === "gateway") &&
        !networksOf(s).some((n) => networksOf(svc(host)).includes(n))
      ) {
        problems.push(`${w}: ${key} uses ${host}, which shares no network with it`);
      }
    }
    // A target that opens untrusted documents has no way out of the host: internal networks only.
    if (EGRESS_LIMITED_TARGETS.includes(target)) {
      const open = networksOf(s).filter((n) => at(docs[0], "networks", n, "internal") !== true);
      if (open.length > 0) {
        problems.push(
          `${w}: on network ${open.join(", ")}, which leads out of the host; use internal networks only`,
        );
      }
    }
  }
  // Once every service's target is known: the gateway's URLs reach files and search.
  for (const name of locus) {
    const env = composeEnv(svc(name));
    for (const [target, variable] of Object.entries(CALLED_TARGETS)) {
      if (!env[variable]) continue;
      const host = new URL(env[variable]).hostname;
      if (names.includes(host) && targetOf.get(host) !== target) {
        problems.push(
          `${tag} ${name}: ${variable} points at ${host}, which runs ${show(targetOf.get(host))}`,
        );
      }
    }
  }
  const envs = [...targetOf.keys()].map((name) => ({ ...imageEnv, ...composeEnv(svc(name)) }));
  for (const t of requiredTargets(envs)) {
    if (![...targetOf.values()].includes(t)) problems.push(`${tag} no service runs target ${t}`);
  }
  if (!migrate) problems.push(`${tag} no migrate service (cli.js migrate)`);

  // depends_on: every dependency exists; service_healthy only on services with a healthcheck;
  // the Locus services wait for the migration to finish.
  for (const name of names) {
    for (const [dep, cond] of Object.entries(obj(svc(name).depends_on))) {
      const condition = text(at(cond, "condition"));
      if (!names.includes(dep)) problems.push(`${tag} ${name}: depends on ${dep}, not a service`);
      else if (condition === "service_healthy" && !hasHealthcheck(svc(dep))) {
        problems.push(`${tag} ${name}: waits for ${dep} to be healthy, but it has no healthcheck`);
      } else if (condition === "service_healthy" && list(svc(dep).profiles).length > 0) {
        problems.push(`${tag} ${name}: waits for ${dep}, which only starts with a profile`);
      }
    }
  }
  for (const name of targetOf.keys()) {
    if (migrate && at(svc(name), "depends_on", migrate, "condition") !== "service_completed_successfully") {
      problems.push(`${tag} ${name}: must wait for ${migrate} (condition service_completed_successfully)`);
    }
  }

  // Credentials and the bucket agree between Locus and the servers.
  const anyLocus = composeEnv(svc([...targetOf.keys()][0] ?? ""));
  const pg = byImage(/(^|\/)postgres:/)[0];
  if (pg && anyLocus.DATABASE_URL) {
    const u = new URL(anyLocus.DATABASE_URL);
    const e = composeEnv(svc(pg));
    if (
      decodeURIComponent(u.password) !== e.POSTGRES_PASSWORD ||
      u.username !== (e.POSTGRES_USER ?? "postgres")
    ) {
      problems.push(`${tag} DATABASE_URL's user or password differs from the ${pg} service's`);
    }
  }
  const mq = byImage(/(^|\/)rabbitmq:/)[0];
  if (mq && anyLocus.AMQP_URL) {
    const u = new URL(anyLocus.AMQP_URL);
    const e = composeEnv(svc(mq));
    if (
      decodeURIComponent(u.password) !== e.RABBITMQ_DEFAULT_PASS ||
      u.username !== e.RABBITMQ_DEFAULT_USER
    ) {
      problems.push(`${tag} AMQP_URL's user or password differs from the ${mq} service's`);
    }
  }
  const s3 = byImage(/(^|\/)minio\/minio:/)[0];
  if (s3) {
    const e = composeEnv(svc(s3));
    if (
      anyLocus.S3_ACCESS_KEY_ID !== e.MINIO_ROOT_USER ||
      anyLocus.S3_SECRET_ACCESS_KEY !== e.MINIO_ROOT_PASSWORD
    ) {
      problems.push(
        `${tag} S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY differ from the ${s3} service's credentials`,
      );
    }
    const makesBucket = names.some((n) =>
      [...list(svc(n).entrypoint), ...list(svc(n).command)].some((a) =>
        show(a).includes(`mc mb --ignore-existing local/${anyLocus.S3_BUCKET ?? ""}`),
      ),
    );
    if (!makesBucket)
      problems.push(`${tag} no one-shot service creates the bucket ${anyLocus.S3_BUCKET ?? ""}`);
  }

  if (problems.length === 0) {
    process.stdout.write(
      `${tag.slice(1, -1)}: ok (${names.length} services, ${locus.length} from the Locus image running)\n`,
    );
  }
  return problems;
}
