// What the suites talk to besides Node: PostgreSQL, RabbitMQ, Redis and Elasticsearch (its
// contract suite and the split e2e suite on it). Each comes from, in order:
//   1. the environment (DATABASE_URL, AMQP_URL, REDIS_URL, ELASTICSEARCH_URL), as given;
//   2. the machine, on its standard local port (CI's and this project's machines have them,
//      started by .ci/services.sh; Elasticsearch by tools/elasticsearch/start.sh);
//   3. a container started for this run with testcontainers, where a Docker engine answers (a
//      contributor's laptop, CI elsewhere), removed when the run ends.
// With none of the three, a suite that needs the service fails saying so; Elasticsearch's suites
// skip their tests with the reason in the name (LOCUS_TEST_ELASTICSEARCH_ABSENT), and a skip that
// scripts/allowed-skips.json does not list fails the run.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { connect } from "node:net";

const ENGINE_TIMEOUT_MS = 5_000;

const portOpen = (port) =>
  new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });

/**
 * Images and how each is started (`configure` is given a GenericContainer and testcontainers'
 * exports) and reached. Versions as close as the images allow to what
 * Debian bookworm runs on the machines (PostgreSQL 15, RabbitMQ 3.10, Redis 7) and to the
 * Elasticsearch client's major version (8).
 */
export const SERVICES = {
  PostgreSQL: {
    env: "DATABASE_URL",
    port: 5432,
    image: "postgres:15",
    // The suites connect as postgres without a password to a database named test, as on the machines.
    configure: (c, { Wait }) =>
      c.withEnvironment({ POSTGRES_HOST_AUTH_METHOD: "trust", POSTGRES_DB: "test" }).withWaitStrategy(
        // The image's entrypoint starts the server twice (initdb, then for real).
        Wait.forLogMessage(/database system is ready to accept connections/, 2),
      ),
    url: (host, port) => `postgres://postgres@${host}:${port}/test`,
  },
  RabbitMQ: {
    env: "AMQP_URL",
    port: 5672,
    image: "rabbitmq:3.13",
    // RabbitMQ lets guest in from localhost only, and a mapped port is not localhost to it.
    configure: (c, { Wait }) =>
      c
        .withEnvironment({ RABBITMQ_DEFAULT_USER: "locus", RABBITMQ_DEFAULT_PASS: "locus" })
        .withWaitStrategy(Wait.forLogMessage(/Server startup complete/)),
    url: (host, port) => `amqp://locus:locus@${host}:${port}`,
    // The split suites list their queues with rabbitmqctl, which must reach this broker.
    extra: (container) => ({ LOCUS_TEST_RABBITMQCTL: `docker exec ${container.getId()} rabbitmqctl` }),
  },
  Redis: {
    env: "REDIS_URL",
    port: 6379,
    image: "redis:7",
    configure: (c, { Wait }) => c.withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/)),
    url: (host, port) => `redis://${host}:${port}`,
  },
  Elasticsearch: {
    env: "ELASTICSEARCH_URL",
    port: 9200,
    image: "docker.elastic.co/elasticsearch/elasticsearch:8.19.7",
    configure: (c, { Wait }) =>
      c
        .withEnvironment({
          "discovery.type": "single-node",
          "xpack.security.enabled": "false",
          ES_JAVA_OPTS: "-Xms512m -Xmx512m",
        })
        .withWaitStrategy(Wait.forHttp("/_cluster/health?wait_for_status=yellow", 9200))
        .withStartupTimeout(180_000),
    url: (host, port) => `http://${host}:${port}`,
    // Its suites run only where ELASTICSEARCH_URL is set: the machine's node is named to them.
    announce: true,
  },
};

/** The container engine's client, or why there is none (testcontainers' own detection). */
async function containerEngine() {
  try {
    const tc = await import("testcontainers");
    const client = await Promise.race([
      tc.getContainerRuntimeClient(),
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error("no answer in 5 s")), ENGINE_TIMEOUT_MS).unref(),
      ),
    ]);
    return { tc, client };
  } catch (err) {
    return { reason: String(err?.message ?? err).split("\n")[0] };
  }
}

/**
 * Finds or starts every service; returns the environment the suites get and a stop() for the
 * containers. `onMachine` says which were found on the machine (the fault suites stop and start
 * those, so they run only when PostgreSQL and RabbitMQ are the machine's own).
 */
export async function provideServices(log = console.error) {
  const env = {};
  const containers = [];
  const onMachine = new Set();
  // Whether it answers on its local port: then it is the machine's own.
  const foundOnMachine = async (name) => {
    const s = SERVICES[name];
    if (!(await portOpen(s.port))) return false;
    onMachine.add(name);
    if (s.announce) env[s.env] = s.url("127.0.0.1", s.port);
    return true;
  };
  const wanted = [];
  for (const [name, s] of Object.entries(SERVICES)) {
    if (process.env[s.env]) continue;
    if (!(await foundOnMachine(name))) wanted.push(name);
  }
  // Root on a Debian machine without them: install and start the machine's own (as CI does).
  let engine = null;
  if (wanted.length > 0) engine = await containerEngine();
  if (wanted.length > 0 && !engine?.client) {
    if (process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")) {
      log(`${wanted.join(", ")} not answering: starting them with .ci/services.sh`);
      spawnSync("bash", [".ci/services.sh"], { stdio: "inherit" });
      for (const name of wanted) await foundOnMachine(name);
    } else {
      log(
        `${wanted.join(", ")} not answering on 127.0.0.1, and no Docker engine to start them ` +
          `(${engine?.reason}): the suites that need them will fail. Start them (on Debian, as root: ` +
          "bash .ci/services.sh; Elasticsearch alone: bash tools/elasticsearch/start.sh), or set " +
          wanted.map((name) => SERVICES[name].env).join(", ") +
          ".",
      );
    }
  }
  for (const name of wanted) {
    if (onMachine.has(name)) continue;
    const s = SERVICES[name];
    if (!engine?.client) {
      if (name === "Elasticsearch") {
        env.LOCUS_TEST_ELASTICSEARCH_ABSENT = `no ELASTICSEARCH_URL, and no Docker engine to start one: ${engine?.reason}`;
      }
      continue;
    }
    log(`${name}: starting ${s.image} with testcontainers ...`);
    try {
      const container = await s
        .configure(new engine.tc.GenericContainer(s.image).withExposedPorts(s.port), engine.tc)
        .start();
      containers.push(container);
      env[s.env] = s.url(container.getHost(), container.getMappedPort(s.port));
      Object.assign(env, s.extra?.(container) ?? {});
      log(`${name}: ${env[s.env]}`);
    } catch (err) {
      log(`${name}: its container did not start: ${String(err?.message ?? err).split("\n")[0]}`);
      if (name === "Elasticsearch") env.LOCUS_TEST_ELASTICSEARCH_ABSENT = "its container did not start";
    }
  }
  return {
    env,
    onMachine,
    async stop() {
      for (const container of containers.reverse()) await container.stop().catch(() => undefined);
    },
  };
}
