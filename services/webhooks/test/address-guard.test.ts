import { webhookUrlFormProblem } from "@locus/contracts";
import { loadConfig } from "@locus/runtime";
import { AddressGuard, addressKind, RefusedAddressError } from "../src/address-guard.ts";

describe("webhook address guard", () => {
  it.each([
    ["93.184.216.34", "public"],
    ["8.8.8.8", "public"],
    ["2606:4700:4700::1111", "public"],
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["0.0.0.0", "unroutable"],
    ["0.1.2.3", "unroutable"],
    ["::1", "loopback"],
    ["::", "unroutable"],
    ["::ffff:0.0.0.0", "unroutable"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["172.32.0.1", "public"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "private"],
    ["100.127.255.255", "private"],
    ["fd12:3456::1", "private"],
    ["fc00::1", "private"],
    ["169.254.169.254", "link-local"],
    ["169.254.0.1", "link-local"],
    ["fe80::1", "link-local"],
    ["febf::1", "link-local"],
    ["224.0.0.1", "unroutable"],
    ["255.255.255.255", "unroutable"],
    ["ff02::1", "unroutable"],
    // IPv4-mapped IPv6 is the IPv4 address it carries, in either spelling.
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::ffff:a9fe:a9fe", "link-local"],
    ["::ffff:10.0.0.1", "private"],
    ["::ffff:8.8.8.8", "public"],
    ["64:ff9b::10.0.0.1", "private"],
    ["64:ff9b::a9fe:a9fe", "link-local"],
    ["64:ff9b::8.8.8.8", "public"],
    ["::7f00:1", "unroutable"],
  ])("%s is %s", (address, kind) => {
    expect(addressKind(address)).toBe(kind);
  });

  const fakeDns = (answers: Record<string, string[]>) => (host: string) => {
    const found = answers[host];
    if (!found) return Promise.reject(new Error("ENOTFOUND"));
    return Promise.resolve(found.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })));
  };

  it("refuses a host if any address it resolves to is not allowed, and connects to a checked one", async () => {
    const guard = new AddressGuard(
      [],
      fakeDns({
        "ok.test": ["93.184.216.34"],
        "mixed.test": ["93.184.216.34", "10.0.0.5"],
        "meta.test": ["169.254.169.254"],
      }),
    );
    await expect(guard.check(new URL("https://ok.test/hook"))).resolves.toEqual({
      address: "93.184.216.34",
      family: 4,
    });
    await expect(guard.check(new URL("https://mixed.test/"))).rejects.toThrow(
      /private address \(10\.0\.0\.5\)/,
    );
    await expect(guard.check(new URL("http://meta.test/"))).rejects.toThrow(/link-local/);
    await expect(guard.check(new URL("http://nowhere.test/"))).rejects.toBeInstanceOf(RefusedAddressError);
    await expect(guard.check(new URL("http://127.0.0.1:8080/"))).rejects.toThrow(
      /LOCUS_WEBHOOK_ALLOW_ADDRESSES=loopback/,
    );
    await expect(guard.check(new URL("http://[::ffff:127.0.0.1]/"))).rejects.toThrow(/loopback/);
    await expect(guard.check(new URL("http://[fe80::1]/"))).rejects.toThrow(/link-local/);
  });

  it("allows only the kinds the operator lists; multicast never", async () => {
    const guard = new AddressGuard(["loopback"], fakeDns({ "local.test": ["127.0.0.1", "::1"] }));
    await expect(guard.check(new URL("http://local.test/"))).resolves.toEqual({
      address: "127.0.0.1",
      family: 4,
    });
    await expect(guard.check(new URL("http://[::1]:9/"))).resolves.toEqual({ address: "::1", family: 6 });
    await expect(guard.check(new URL("http://192.168.0.1/"))).rejects.toThrow(/private/);
    await expect(guard.check(new URL("http://224.0.0.1/"))).rejects.toThrow(
      /unspecified, multicast or reserved/,
    );
    // Unspecified addresses reach this machine too, but name no receiver: refused all the same.
    await expect(guard.check(new URL("http://0.0.0.0/"))).rejects.toThrow(/unspecified/);
    await expect(guard.check(new URL("http://[::]:9/"))).rejects.toThrow(/unspecified/);
  });

  it("refuses URLs that are not http(s) or carry credentials", () => {
    expect(webhookUrlFormProblem("https://hooks.example.com/x?token=1")).toBeNull();
    expect(webhookUrlFormProblem("ftp://example.com/")).toMatch(/http or https/);
    expect(webhookUrlFormProblem("file:///etc/passwd")).toMatch(/http or https/);
    expect(webhookUrlFormProblem("https://user:pw@example.com/")).toMatch(/user name or password/);
    expect(webhookUrlFormProblem("not a url")).toMatch(/absolute/);
  });

  it("reads LOCUS_WEBHOOK_ALLOW_ADDRESSES: none by default, a comma list, unknown kinds refused", () => {
    expect(loadConfig({}).webhooks.allowAddresses).toEqual([]);
    expect(
      loadConfig({ LOCUS_WEBHOOK_ALLOW_ADDRESSES: "loopback, private" }).webhooks.allowAddresses,
    ).toEqual(["loopback", "private"]);
    expect(() => loadConfig({ LOCUS_WEBHOOK_ALLOW_ADDRESSES: "everything" })).toThrow(/unknown kind/);
  });
});
