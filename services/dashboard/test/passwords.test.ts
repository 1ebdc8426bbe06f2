import { hashPassword, passwordProblem, verifyPassword } from "../src/index.ts";

describe("passwords", () => {
  it("hashes with scrypt and a random salt, and verifies only the right password", async () => {
    const a = await hashPassword("correct horse battery staple");
    const b = await hashPassword("correct horse battery staple");
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword("correct horse battery staple", a)).toBe(true);
    expect(await verifyPassword("correct horse battery stapl", a)).toBe(false);
    expect(await verifyPassword("correct horse battery staple", "md5$abc")).toBe(false);
    expect(await verifyPassword("x", "scrypt$0$8$1$abc$def")).toBe(false);
  });

  it("treats the same password typed with other Unicode forms as the same (NFKC)", async () => {
    const stored = await hashPassword("ｆｕｌｌｗｉｄｔｈ passphrase");
    expect(await verifyPassword("fullwidth passphrase", stored)).toBe(true);
  });

  it.each([
    ["short", "at least 10"],
    ["x".repeat(201), "at most 200"],
    ["ada@example.com", "email"],
    ["ADA@EXAMPLE.COM", "email"],
    ["aaaaaaaaaaaa", "too easy"],
    ["1234567890abc", "too easy"],
    ["password12345", "too easy"],
  ])("refuses %s", (password, reason) => {
    expect(passwordProblem(password, "ada@example.com")).toContain(reason);
  });

  it("takes a long password of any characters", () => {
    expect(passwordProblem("tram river 7 lamp", "ada@example.com")).toBeNull();
    expect(passwordProblem("пароль из слов", "ada@example.com")).toBeNull();
  });
});
