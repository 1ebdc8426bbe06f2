import { ConfigError, loadConfig, unnamedParts } from "../src/config.ts";

describe("loadConfig", () => {
  it("reads LOCUS_TRUST_PROXY as hops, addresses and ranges, and names what it cannot read", () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ LOCUS_TRUST_PROXY: "false" }).trustProxy).toBe(false);
    expect(loadConfig({ LOCUS_TRUST_PROXY: "2" }).trustProxy).toBe(2);
    expect(loadConfig({ LOCUS_TRUST_PROXY: "10.0.0.0/8, fd00::/8,loopback" }).trustProxy).toEqual([
      "10.0.0.0/8",
      "fd00::/8",
      "loopback",
    ]);
    for (const bad of ["10.0.0.0/33", "proxy.example.com", "10.0.0.1/8/2", "yes"]) {
      expect(() => loadConfig({ LOCUS_TRUST_PROXY: bad })).toThrow(ConfigError);
    }
    expect(() => loadConfig({ LOCUS_TRUST_PROXY: "10.0.0.0/33" })).toThrow(
      /LOCUS_TRUST_PROXY.*"10.0.0.0\/33"/,
    );
  });

  it("refuses secrets copied from an example, or too plain to be random, naming the setting", () => {
    const random = "k3J9vQ2xW8mP5tR1yU7iO4aS6dF0gH-_zLcBnEq";
    expect(loadConfig({ LOCUS_INTERNAL_SECRET: random }).internalSecret).toBe(random);
    for (const placeholder of [
      "change-me-internal-secret-at-least-32-characters",
      "CHANGE_ME-signing-secret-at-least-32-characters",
      "replace-this-with-a-long-random-value-please",
      "a".repeat(40),
      "abababababababababababababababababab",
    ]) {
      for (const name of ["LOCUS_INTERNAL_SECRET", "LOCUS_SIGNING_SECRET"]) {
        expect(() => loadConfig({ [name]: placeholder })).toThrow(ConfigError);
        expect(() => loadConfig({ [name]: placeholder })).toThrow(new RegExp(`${name}: .*random value`));
      }
    }
    expect(() => loadConfig({ LOCUS_SIGNING_SECRET: "short" })).toThrow(/at least 32 characters/);
  });

  it("runs the meaning stage with the sentence encoder (the default) on SQLite or Postgres only, and refuses an encoder target without it", () => {
    expect(loadConfig({}).ai.embedder).toBe("encoder");
    expect(loadConfig({}).meaningStage).toBe(true);
    expect(loadConfig({ LOCUS_EMBEDDER: "local" }).meaningStage).toBe(false);
    expect(loadConfig({ LOCUS_EMBEDDER: "encoder" }).meaningStage).toBe(true);
    expect(
      loadConfig({
        LOCUS_EMBEDDER: "encoder",
        LOCUS_SEARCH_INDEX: "postgres",
        DATABASE_URL: "postgres://db/locus",
      }).meaningStage,
    ).toBe(true);
    const elasticsearch = {
      LOCUS_EMBEDDER: "encoder",
      LOCUS_SEARCH_INDEX: "elasticsearch",
      ELASTICSEARCH_URL: "http://es:9200",
    };
    expect(loadConfig(elasticsearch).meaningStage).toBe(false);
    const encoderTarget = {
      LOCUS_TARGETS: "encoder",
      LOCUS_BUS: "rabbitmq",
      AMQP_URL: "amqp://mq",
      LOCUS_METADATA_STORE: "postgres",
      LOCUS_SEARCH_INDEX: "postgres",
      DATABASE_URL: "postgres://db/locus",
      LOCUS_BLOB_STORE: "s3",
      S3_BUCKET: "locus",
    };
    expect(loadConfig({ ...encoderTarget, LOCUS_EMBEDDER: "encoder" }).meaningStage).toBe(true);
    expect(loadConfig(encoderTarget).meaningStage).toBe(true);
    expect(() => loadConfig({ ...encoderTarget, LOCUS_EMBEDDER: "local" })).toThrow(
      /LOCUS_TARGETS: "encoder" runs the meaning stage/,
    );
    expect(() => loadConfig({ ...encoderTarget, ...elasticsearch })).toThrow(ConfigError);
  });

  it("with LOCUS_SHAPE=split, defaults every adapter to the shared one and names every missing connection in one sentence", () => {
    const connections = {
      DATABASE_URL: "postgres://db/locus",
      AMQP_URL: "amqp://mq",
      S3_BUCKET: "locus",
      REDIS_URL: "redis://cache",
    };
    expect(loadConfig({ ...connections, LOCUS_SHAPE: "split" }).adapters).toEqual({
      metadataStore: "postgres",
      blobStore: "s3",
      bus: "rabbitmq",
      searchIndex: "postgres",
      rateLimitStore: "redis",
    });
    // Named adapters still win, and the embedded shape keeps the embedded defaults.
    const chosen = {
      ...connections,
      LOCUS_SHAPE: "split",
      LOCUS_SEARCH_INDEX: "elasticsearch",
      ELASTICSEARCH_URL: "http://es:9200",
    };
    expect(loadConfig(chosen).adapters.searchIndex).toBe("elasticsearch");
    expect(loadConfig(connections).adapters.metadataStore).toBe("sqlite");

    let problems: string[] = [];
    try {
      loadConfig({ LOCUS_SHAPE: "split", DATABASE_URL: "postgres://db/locus" });
    } catch (err) {
      problems = (err as ConfigError).problems;
    }
    expect(problems).toEqual([
      expect.stringMatching(
        /^LOCUS_SHAPE=split runs every part on shared infrastructure, but these are not set: AMQP_URL \(required by LOCUS_BUS=rabbitmq\), REDIS_URL \(.*\), S3_BUCKET \(.*\)\. Set them/,
      ),
    ]);
    // A shared shape with an embedded part named outright is a contradiction, not a choice.
    expect(() => loadConfig({ ...connections, LOCUS_SHAPE: "split", LOCUS_BLOB_STORE: "local" })).toThrow(
      /LOCUS_SHAPE=split shares every piece between processes; not LOCUS_BLOB_STORE=local \(use s3\)/,
    );
    expect(() => loadConfig({ LOCUS_SHAPE: "spilt" })).toThrow(/LOCUS_SHAPE: /);
  });

  it("finds the parts an outside process (the CLI) would silently take from the data dir instead of the deployment", () => {
    const readme = { DATABASE_URL: "postgres://db/locus", LOCUS_METADATA_STORE: "postgres" };
    const config = loadConfig(readme);
    // The records are named: an account command is fine.
    expect(unnamedParts(config, readme, ["metadataStore"])).toBeUndefined();
    const refusal = unnamedParts(config, readme, ["metadataStore", "bus", "blobStore", "searchIndex"]);
    expect(refusal).toMatch(
      /^DATABASE_URL, LOCUS_METADATA_STORE=postgres are set, naming a deployment's shared parts, but LOCUS_BUS, LOCUS_BLOB_STORE, LOCUS_SEARCH_INDEX are not, so this command would use an in-process bus of its own, the files in \.\/data, the SQLite search index in \.\/data, instead of the deployment's\. Set LOCUS_SHAPE=split/,
    );
    expect(refusal).toMatch(
      /name each \(LOCUS_BUS=rabbitmq, LOCUS_BLOB_STORE=s3, LOCUS_SEARCH_INDEX=postgres\)/,
    );
    // Saying the shape, or naming nothing shared, is an answer.
    for (const env of [{ ...readme, LOCUS_SHAPE: "split" }, { ...readme, LOCUS_SHAPE: "embedded" }, {}]) {
      expect(unnamedParts(config, env, ["metadataStore", "bus", "blobStore", "searchIndex"])).toBeUndefined();
    }
  });
});
