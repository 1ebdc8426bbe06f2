import { ConfigError, loadConfig } from "../src/config.ts";

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
});
