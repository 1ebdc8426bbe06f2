import { makePdf, pageWith, recordResilience, waitForFile } from "@locus/testing";
import { connect } from "node:net";
import { type ApiSuite, type FileBody, MAX_UPLOAD, uploadReady } from "./shared.ts";

export function describeBadInput(s: ApiSuite): void {
  describe("bad input", () => {
    it("fails a truncated PDF with a reason", async () => {
      const pdf = await makePdf({ pages: [pageWith("Complete sentence here.", 2), pageWith("More.", 3)] });
      const f = await uploadReady(s.live, pdf.subarray(0, Math.floor(pdf.length / 2)), "truncated.pdf");
      expect(f.status).toBe("failed");
      expect(f.error?.code).toBe("pdf_corrupt");
      expect(f.error?.message).toMatch(/truncated/i);
      // A file that is not ready has no passages to show, and says why.
      const passages = await s.live.get(`/api/files/${f.id}/passages`);
      expect(passages.status).toBe(409);
      expect(((await passages.json()) as { detail: string }).detail).toMatch(/failed/);
    });

    it("fails a password-protected PDF with a reason", async () => {
      const f = await uploadReady(
        s.live,
        await makePdf({ pages: [["Secret"]], userPassword: "hunter2" }),
        "secret.pdf",
      );
      expect(f.status).toBe("failed");
      expect(f.error?.code).toBe("pdf_encrypted");
    });

    it("keeps a PDF whose pages have no text layer ready, with no passages from them", async () => {
      const f = await uploadReady(
        s.live,
        await makePdf({ pages: [[], ["Only the second page speaks of ibex."]] }),
        "scan.pdf",
      );
      expect(f).toMatchObject({ status: "ready", page_count: 2, passage_count: 1 });
    });

    it("refuses a file whose bytes are not an accepted kind with 415, whatever its name", async () => {
      // Binary bytes of no known format (text named .pdf would be read as the text document it is).
      const res = await s.live.upload(Buffer.from([0, 0x13, 0x37, 0, 0xde, 0xad, 0xbe, 0xef]), "fake.pdf");
      expect(res.status).toBe(415);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/PDF/);
      // Formats Locus recognises but does not read: an archive dressed as a PDF, an icon as a PNG.
      const zip = Buffer.from("504b0304140000000000000000000000000000000000000000000000000000", "hex");
      expect((await s.live.upload(zip, "report.pdf")).status).toBe(415);
      const icon = Buffer.from("00000100010010100000010020006804000016000000", "hex");
      const refused = await s.live.upload(icon, "picture.png");
      expect(refused.status).toBe(415);
      expect(((await refused.json()) as { detail: string }).detail).toBe(
        "image/x-icon files are not supported. Locus accepts: PDF, images (PNG, JPEG, WebP, TIFF, GIF, BMP), audio (MP3, WAV, M4A, AAC, OGG, Opus, FLAC), video (MP4, MOV, MKV, WebM), documents (DOCX, DOC, ODT, RTF, PPTX, PPT, ODP, XLSX, XLS, ODS, TXT, Markdown, HTML) (recognised from the file's content, not its name).",
      );
    });

    /** Sends a multipart upload by hand, so the body can be cut short. */
    async function rawUpload(
      body: Buffer,
      contentLength: number,
      cut: boolean,
      cutAfterMs = 200,
    ): Promise<string> {
      const { hostname, port } = new URL(s.locus.baseUrl);
      return new Promise((resolve, reject) => {
        const socket = connect({ host: hostname, port: Number(port) }, () => {
          socket.write(
            `POST /api/files/upload HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${s.liveKey}\r\n` +
              `Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: ${contentLength}\r\n` +
              // The answer is read to the connection's end: ask the server to close it then.
              "Connection: close\r\n\r\n",
          );
          socket.write(body);
          if (cut) setTimeout(() => socket.destroy(), cutAfterMs);
        });
        let answer = "";
        socket.on("data", (d: Buffer) => (answer += d.toString()));
        socket.on("close", () => resolve(answer));
        socket.on("error", reject);
      });
    }

    it("survives uploads that break off, keeping nothing and charging nothing", async () => {
      const before = ((await (await s.live.get("/api/files")).json()) as FileBody[]).length;
      const pdf = await makePdf({
        pages: Array.from({ length: 40 }, (_, i) => pageWith(`Broken upload ${i}`, 2)),
      });
      expect(pdf.length).toBeGreaterThan(20_000);
      const head = Buffer.from(
        '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="cut.pdf"\r\n\r\n',
      );
      const partial = Buffer.concat([head, pdf]);
      // The form ends without its closing boundary.
      const truncated = await rawUpload(partial, partial.length, false);
      expect(truncated).toMatch(/^HTTP\/1.1 400/);
      // The client goes away mid-body.
      await rawUpload(partial, partial.length + 100_000, true);

      expect((await fetch(`${s.locus.baseUrl}/healthz`)).status).toBe(200);
      expect(((await (await s.live.get("/api/files")).json()) as FileBody[]).length).toBe(before);
    });

    it("never processes an upload whose request broke off after its file part", async () => {
      // 17 pages: a count no other upload of this suite has, to find its "file ready" in the log.
      const pdf = await makePdf({ pages: Array.from({ length: 17 }, (_, i) => [`Abandoned page ${i}`]) });
      const body = Buffer.concat([
        Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="file"; filename="gone.pdf"\r\n\r\n'),
        pdf,
        Buffer.from('\r\n--XyZ\r\nContent-Disposition: form-data; name="note"\r\n\r\nstill typing'),
      ]);
      const readyBefore = s.locus.logs.filter((l) => l.includes('"pageCount":17')).length;
      // The whole file arrives, then the request hangs for 5 s (time enough to extract it, even
      // as a process's first file), then the client goes away: the upload is discarded, so it
      // must not have been processed.
      await rawUpload(body, body.length + 1000, true, 5000);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(s.locus.logs.filter((l) => l.includes('"pageCount":17')).length).toBe(readyBefore);
      const files = (await (await s.live.get("/api/files")).json()) as FileBody[];
      expect(files.some((f) => f.original_name === "gone.pdf")).toBe(false);
      recordResilience(`audit-upload-broke-off-${s.shape}`, { held_s: 5, extracted: 0, listed: 0 });
    });

    it("answers a malformed percent-escape in the path with 400", async () => {
      // Previews are Locus's own routes only in the all-in-one shape (S3 serves them when split).
      for (const path of s.shape === "all-in-one"
        ? ["/api/files/%ZZ", "/previews/%ZZ"]
        : ["/api/files/%ZZ"]) {
        const res = await s.live.get(path);
        expect(res.status).toBe(400);
        expect(((await res.json()) as { detail: string }).detail).toMatch(/percent-escape/);
      }
    });

    it("refuses an empty file with 400", async () => {
      const res = await s.live.upload(Buffer.alloc(0), "empty.pdf");
      expect(res.status).toBe(400);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/empty/);
    });

    it("refuses a file over the size limit with 413 and stores nothing", async () => {
      const before = ((await (await s.live.get("/api/files")).json()) as FileBody[]).length;
      const pdf = await makePdf({ pages: [["Big"]] });
      const big = Buffer.concat([pdf, Buffer.alloc(MAX_UPLOAD, 0x20)]);
      const res = await s.live.upload(big, "big.pdf");
      expect(res.status).toBe(413);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/larger than/);
      const after = ((await (await s.live.get("/api/files")).json()) as FileBody[]).length;
      expect(after).toBe(before);
    });

    it("keeps hostile names as plain names: no path, no control characters", async () => {
      const pdf = await makePdf({ pages: [["Names"]] });
      // Path parts are dropped; escaped line breaks (%0A, as browsers send them) are removed.
      const res = await s.live.upload(pdf, "../../etc/pass\nwd.pdf");
      expect(res.status).toBe(200);
      const { file } = (await res.json()) as { file: FileBody };
      expect(file.original_name).toBe("passwd.pdf");
      // Raw control characters make the part header itself invalid.
      const raw = await s.live.upload(pdf, "bell\u0007.pdf");
      expect(raw.status).toBe(400);
      expect(((await raw.json()) as { detail: string }).detail).toMatch(/parsing the body/);
      const long = await s.live.upload(pdf, `${"n".repeat(1000)}.pdf`);
      expect(long.status).toBe(200);
      const tooLong = await s.live.upload(pdf, `${"n".repeat(1100)}.pdf`);
      expect(tooLong.status).toBe(400);
      expect(((await tooLong.json()) as { detail: string }).detail).toMatch(/longer than 1024/);
      await waitForFile(s.live, file.id);
    });
  });
}
