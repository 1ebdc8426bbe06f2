import { readFileSync } from "node:fs";
import { LocusError } from "@locus/contracts";
import { sniffKind } from "../src/index.ts";

/**
 * What an upload is taken for, from its first bytes: office documents written by LibreOffice (their
 * heads, as an upload is sniffed), text formats, which have no signature, and the refusals.
 */
const head = (name: string) => readFileSync(new URL(`./fixtures/heads/${name}`, import.meta.url));

describe("sniffKind", () => {
  it.each([
    ["kind-sample.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"],
    ["kind-sample.odt", "application/vnd.oasis.opendocument.text"],
    ["kind-sample.rtf", "application/rtf"],
    ["kind-sample.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"],
    ["kind-sample.ods", "application/vnd.oasis.opendocument.spreadsheet"],
    ["kind-sample.pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"],
    ["kind-sample.odp", "application/vnd.oasis.opendocument.presentation"],
    // Templates: the same formats.
    ["kind-sample.ott", "application/vnd.oasis.opendocument.text-template"],
    ["kind-sample.dotx", "application/vnd.openxmlformats-officedocument.wordprocessingml.template"],
  ])("takes %s for a document by its zip contents or header, whatever its name", async (name, mimeType) => {
    expect(await sniffKind(head(name), "renamed.bin")).toEqual({ kind: "document", mimeType });
  });

  it.each([
    ["kind-sample.doc", "application/msword"],
    ["kind-sample.xls", "application/vnd.ms-excel"],
    ["kind-sample.ppt", "application/vnd.ms-powerpoint"],
  ])("names the legacy format in %s's OLE container by its extension", async (name, mimeType) => {
    expect(await sniffKind(head(name), name)).toEqual({ kind: "document", mimeType });
    // Without a telling name it is still a document: the converter finds out which.
    expect(await sniffKind(head(name), "scan")).toEqual({ kind: "document", mimeType: "application/x-cfb" });
  });

  it("takes UTF-8 and UTF-16 text for plain text, Markdown by its extension, HTML by its markup", async () => {
    const text = Buffer.from("Meeting notes\n\nThe heron was seen at dawn – twice.\n");
    expect(await sniffKind(text, "notes.txt")).toEqual({ kind: "document", mimeType: "text/plain" });
    expect(await sniffKind(text, "notes")).toEqual({ kind: "document", mimeType: "text/plain" });
    expect(await sniffKind(text, "README.md")).toEqual({ kind: "document", mimeType: "text/markdown" });
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("Notes in UTF-16\n", "utf16le")]);
    expect(await sniffKind(utf16, "notes.txt")).toEqual({ kind: "document", mimeType: "text/plain" });
    const page = Buffer.from("\uFEFF  <!-- saved -->\n<!DOCTYPE html><html><body><p>Hi</p></body></html>");
    expect(await sniffKind(page, "page.txt")).toEqual({ kind: "document", mimeType: "text/html" });
    const xhtml = Buffer.from(
      '<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><p>x</p></html>',
    );
    expect(await sniffKind(xhtml, "page.xhtml")).toEqual({ kind: "document", mimeType: "text/html" });
  });

  it("keeps text whose last character the sniffed head cuts in two", async () => {
    // 4,099 ASCII bytes and the first byte of a two-byte character: the 4,100 bytes sniffed.
    const cut = Buffer.concat([Buffer.alloc(4099, "a"), Buffer.from("é").subarray(0, 1)]);
    expect(await sniffKind(cut, "long.txt")).toEqual({ kind: "document", mimeType: "text/plain" });
  });

  it("takes Windows-1252 text, and text that starts with an image's or a recording's signature", async () => {
    const cp1252 = Buffer.from("Caf\xe9 cr\xe8me \x93quoted\x94 \x80 5\n", "latin1");
    expect(await sniffKind(cp1252, "menu.txt")).toEqual({ kind: "document", mimeType: "text/plain" });
    for (const start of ["BMW sales by region\n", "ID3 tags explained\n", "GIF89a was a format\n"]) {
      expect(await sniffKind(Buffer.from(start), "notes.txt")).toEqual({
        kind: "document",
        mimeType: "text/plain",
      });
    }
    // A log with its terminal colours.
    const log = Buffer.from("\x1b[32mINFO\x1b[0m started\n");
    expect(await sniffKind(log, "server.log")).toEqual({ kind: "document", mimeType: "text/plain" });
    // A real bitmap's header holds binary bytes at once: still an image.
    const bmp = Buffer.alloc(64);
    bmp.write("BM", 0, "latin1");
    bmp.writeUInt32LE(64, 2);
    bmp.writeUInt32LE(54, 10);
    bmp.writeUInt32LE(40, 14);
    expect((await sniffKind(bmp, "scan.bmp")).kind).toBe("image");
  });

  it("refuses binary data it has no kind for, naming the kinds it takes", async () => {
    const binary = Buffer.from([0x00, 0x13, 0x37, 0x00, 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02]);
    const err = await sniffKind(binary, "notes.txt").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LocusError);
    expect((err as LocusError).code).toBe("unsupported_media_type");
    expect((err as LocusError).message).toContain("DOCX");
    expect((err as LocusError).message).toContain("Markdown");
    // A zip that is no office document is refused too.
    const zip = Buffer.from("504b0304140000000000", "hex");
    await expect(sniffKind(Buffer.concat([zip, Buffer.alloc(40)]), "x.docx")).rejects.toThrow(LocusError);
  });
});
