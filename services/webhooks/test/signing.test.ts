import { Webhook } from "standardwebhooks";
import {
  newWebhookSecret,
  signingSecrets,
  signWebhook,
  verifyWebhook,
  webhookHeaders,
} from "../src/signing.ts";

// The `standardwebhooks` package (the specification's reference library) is the independent
// check: what it accepts, any Standard Webhooks receiver accepts.
describe("Standard Webhooks signatures", () => {
  const body = JSON.stringify({
    type: "file.ready",
    timestamp: "2026-01-01T00:00:00.000Z",
    data: { file: { id: "f" } },
  });

  it("makes whsec_ secrets of 24 random bytes, a new one each time", () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(24);
    expect(newWebhookSecret()).not.toBe(secret);
  });

  it("signs so that the standardwebhooks package verifies the headers and body", () => {
    const secret = newWebhookSecret();
    const headers = webhookHeaders([secret], "msg_1", body, new Date());
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it("a changed body, id or timestamp, or another secret, fails the package's verification", () => {
    const secret = newWebhookSecret();
    const headers = webhookHeaders([secret], "msg_1", body, new Date());
    const verify = (s: string, b: string, h: Record<string, string>) => () => new Webhook(s).verify(b, h);
    expect(verify(secret, body.replace("f", "g"), headers)).toThrow();
    expect(verify(secret, body, { ...headers, "webhook-id": "msg_2" })).toThrow();
    const earlier = String(Number(headers["webhook-timestamp"]) - 1);
    expect(verify(secret, body, { ...headers, "webhook-timestamp": earlier })).toThrow();
    expect(verify(newWebhookSecret(), body, headers)).toThrow();
  });

  it("signs exactly as the package does, and verifies the package's signatures", () => {
    const secret = newWebhookSecret();
    const at = new Date("2026-03-04T05:06:07.000Z");
    const ours = signWebhook(secret, "msg_x", Math.floor(at.getTime() / 1000), body);
    expect(ours).toBe(new Webhook(secret).sign("msg_x", at, body));
    expect(verifyWebhook(secret, "msg_x", Math.floor(at.getTime() / 1000), body, `v1,bogus ${ours}`)).toBe(
      true,
    );
    expect(verifyWebhook(secret, "msg_x", Math.floor(at.getTime() / 1000), `${body} `, ours)).toBe(false);
  });

  it("signs with both secrets while a rotation overlaps, so a receiver with either verifies it", () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const now = new Date("2026-03-04T05:06:07.000Z");
    const rotated = {
      secret: current,
      previousSecret: previous,
      previousSecretExpiresAt: "2026-03-05T05:06:07.000Z",
    };
    expect(signingSecrets(rotated, now)).toEqual([current, previous]);
    const headers = webhookHeaders(signingSecrets(rotated, now), "msg_1", body, new Date());
    expect(headers["webhook-signature"]).toMatch(/^v1,\S+ v1,\S+$/);
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
    // Once the overlap ends (or with none), only the current secret signs.
    expect(signingSecrets(rotated, new Date("2026-03-05T05:06:07.000Z"))).toEqual([current]);
    expect(signingSecrets({ ...rotated, previousSecret: null, previousSecretExpiresAt: null }, now)).toEqual([
      current,
    ]);
  });
});
