import { GenericContainer, Wait } from "testcontainers";
// @ts-expect-error: a plain ES module of the test runner, without types.
import { provideServices, SERVICES } from "../../../scripts/test-services.mjs";

type Service = {
  env: string;
  port: number;
  image: string;
  configure: (c: GenericContainer, tc: { Wait: typeof Wait }) => GenericContainer;
  url: (host: string, port: number) => string;
};
const services = SERVICES as Record<string, Service>;
const provide = provideServices as (log: (line: string) => void) => Promise<{
  env: Record<string, string>;
  onMachine: Set<string>;
  stop(): Promise<void>;
}>;

describe("the services `pnpm test` finds or starts (scripts/test-services.mjs)", () => {
  it("describes each container with testcontainers' builder, without starting it (no Docker engine needed)", () => {
    for (const s of Object.values(services)) {
      const built = s.configure(new GenericContainer(s.image).withExposedPorts(s.port), { Wait });
      expect(built).toBeInstanceOf(GenericContainer);
    }
    expect(services.PostgreSQL!.url("localhost", 32768)).toBe("postgres://postgres@localhost:32768/test");
    expect(services.RabbitMQ!.url("localhost", 32769)).toBe("amqp://locus:locus@localhost:32769");
    expect(services.Redis!.url("localhost", 32770)).toBe("redis://localhost:32770");
    expect(services.Elasticsearch!.url("localhost", 32771)).toBe("http://localhost:32771");
  });

  it("takes every service named by the environment as it is, starting nothing and asking no engine", async () => {
    const names = Object.values(services).map((s) => s.env);
    const saved = Object.fromEntries(names.map((n) => [n, process.env[n]]));
    for (const n of names) process.env[n] = `given://${n}`;
    const lines: string[] = [];
    try {
      const found = await provide((line) => lines.push(line));
      expect(found.env).toEqual({});
      expect([...found.onMachine]).toEqual([]);
      expect(lines).toEqual([]);
      await found.stop();
    } finally {
      for (const n of names) {
        if (saved[n] === undefined) delete process.env[n];
        else process.env[n] = saved[n];
      }
    }
  });
});
