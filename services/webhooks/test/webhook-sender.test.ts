import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { AddressGuard } from "../src/address-guard.ts";
import { WebhookSender } from "../src/webhook-sender.ts";

/** The sender against a real HTTP server on loopback (allowed here, as the operator may). */
let server: Server;
let port = 0;
const hosts: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hosts.push(req.headers.host ?? "");
    req.resume();
    req.on("end", () => {
      if (req.url === "/ok") res.writeHead(204).end();
      else if (req.url === "/redirect") res.writeHead(302, { location: "http://169.254.169.254/" }).end();
      else if (req.url === "/hang") return;
      else if (req.url === "/drip") {
        // Answers at once, then sends its body a byte at a time for longer than the sender waits.
        res.writeHead(200, { "content-type": "text/plain" });
        const drip = setInterval(() => res.write("."), 100);
        res.on("close", () => clearInterval(drip));
      } else res.writeHead(500).end("broken");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

// "hooks.test" resolves to loopback here: the sender must connect to that checked address.
const resolver = (host: string) =>
  host === "hooks.test"
    ? Promise.resolve([{ address: "127.0.0.1", family: 4 }])
    : Promise.reject(new Error("no"));
const sender = new WebhookSender(new AddressGuard(["loopback"], resolver), 500);
const send = (path: string, host = "127.0.0.1") => sender.send(`http://${host}:${port}${path}`, "{}", {});

describe("webhook sender", () => {
  it("a 2xx is a success; connects to the address it checked, with the URL's host name", async () => {
    expect(await send("/ok", "hooks.test")).toMatchObject({ ok: true, statusCode: 204, error: null });
    expect(hosts.at(-1)).toBe(`hooks.test:${port}`);
  });

  it("an error status, a redirect (not followed) and a timeout are failures with their reason", async () => {
    expect(await send("/broken")).toMatchObject({
      ok: false,
      statusCode: 500,
      error: "The receiver answered HTTP 500.",
    });
    const redirect = await send("/redirect");
    expect(redirect).toMatchObject({ ok: false, statusCode: 302 });
    expect(redirect.error).toMatch(/redirects are not followed/);
    const hang = await send("/hang");
    expect(hang).toMatchObject({
      ok: false,
      statusCode: null,
      error: "The receiver did not answer within 500 ms.",
    });
    expect(hang.durationMs).toBeGreaterThanOrEqual(450);
  });

  it("a 2xx whose body is still dripping when the time is up is the 2xx: the status decides", async () => {
    const dripping = await send("/drip");
    expect(dripping).toMatchObject({ ok: true, statusCode: 200, error: null });
    expect(dripping.durationMs).toBeLessThan(2000);
  });

  it("refuses an address the operator has not allowed without connecting, and a closed port is a failure", async () => {
    const strict = new WebhookSender(new AddressGuard([], resolver), 500);
    const before = hosts.length;
    const refused = await strict.send(`http://127.0.0.1:${port}/ok`, "{}", {});
    expect(refused).toMatchObject({ ok: false, statusCode: null });
    expect(refused.error).toMatch(/^Refused: .*loopback/);
    expect(hosts).toHaveLength(before);
    expect((await sender.send("http://127.0.0.1:1/", "{}", {})).error).toBe(
      "The receiver refused the connection.",
    );
    expect((await sender.send("http://user:pw@127.0.0.1/", "{}", {})).error).toMatch(/user name or password/);
  });
});
