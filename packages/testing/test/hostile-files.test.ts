import { inflateSync } from "node:zlib";
import { deflateRepeated } from "../src/hostile-files.ts";

describe("deflateRepeated (the decompression bombs' streams)", () => {
  // zlib checks the Adler-32 trailer as it inflates: a wrong sum throws "incorrect data check".
  it.each([
    ["less than a chunk", 1000],
    ["whole chunks", 3 * 1024 * 1024],
    ["whole chunks and a rest", 3 * 1024 * 1024 + 4321],
    ["nothing after the prefix", 0],
  ])("inflates to the prefix and exactly its size of fill: %s", (_name, size) => {
    const prefix = Buffer.from("BT /F1 12 Tf (Bomb) Tj ET\n", "latin1");
    const inflated = inflateSync(deflateRepeated(prefix, size, 0x20));
    expect(inflated.length).toBe(prefix.length + size);
    expect(inflated.subarray(0, prefix.length).equals(prefix)).toBe(true);
    expect(inflated.subarray(prefix.length).every((byte) => byte === 0x20)).toBe(true);
  });

  it("keeps a gigabyte's stream about a thousand times smaller, made at once", () => {
    expect(deflateRepeated(Buffer.from("x"), 1024 ** 3, 0x20).length).toBeLessThan(2 * 1024 * 1024);
  });
});
