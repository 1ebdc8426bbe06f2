import { schemaErrors } from "../openapi-validator.ts";
import { makeDecompressionBomb, makeScannedPdf, makeTextImage } from "@locus/testing";
import { type ApiSuite, type Box, type FileBody, type SearchBody, uploadReady } from "./shared.ts";

export function describeOcr(s: ApiSuite): void {
  describe("images and scanned PDFs, read by OCR", () => {
    // A phone photo of a notice: turned a few degrees, noisy, JPEG-compressed.
    const NOTICE = [
      "Building maintenance notice for all tenants",
      "The water supply stops on Thursday morning",
      "",
      "Lifts are serviced between noon and four",
      "Please contact the caretaker with questions",
    ];
    let photo: FileBody;
    let scan: FileBody;

    beforeAll(async () => {
      const image = await makeTextImage({
        lines: NOTICE,
        rotateDeg: 2,
        noise: 30,
        format: "jpeg",
        quality: 75,
      });
      photo = await uploadReady(s.live, image.data, "notice photo.jpg");
      // Two pages with no text layer; the phrase on page 2, line 6.
      const pages = [
        ["A scanned letter about the garden party", "It was a pleasant afternoon"],
        [
          "Minutes of the residents meeting",
          "Present were eleven members",
          "The treasurer reported a small surplus",
          "The roof repairs were approved",
          "New bicycle racks were discussed",
          "The committee thanked the volunteer gardeners",
        ],
      ];
      scan = await uploadReady(s.live, await makeScannedPdf(pages), "scanned minutes.pdf");
    }, 180_000);

    it("reads a photo of text: ready, an image with one page", () => {
      expect(photo).toMatchObject({
        status: "ready",
        file_type: "image",
        mime_type: "image/jpeg",
        page_count: 1,
        error: null,
      });
      expect(photo.passage_count).toBeGreaterThanOrEqual(1);
      expect(schemaErrors("FileRecord", photo)).toBeNull();
    });

    it("finds a phrase in the photo with its line, a box on the image and source ocr", async () => {
      const res = await s.live.get("/api/search?q=caretaker&mode=quick");
      const body = (await res.json()) as SearchBody;
      expect(schemaErrors("SearchResponse", body)).toBeNull();
      const hit = body.results.find((r) => r.file_id === photo.id);
      // Line 4: blank lines do not count.
      expect(hit?.locator).toMatchObject({ page: 1, line: 4, line_end: 4, source: "ocr" });
      const bbox = hit?.locator.bbox as Box;
      expect(hit?.locator.confidence).toBeGreaterThan(0.6);
      // The drawing is 1240 px wide; the fourth line sits in the lower half of a ~290 px image.
      expect(bbox.x).toBeGreaterThan(40);
      expect(bbox.x + bbox.width).toBeLessThan(1240);
      expect(bbox.y).toBeGreaterThan(120);
      expect(bbox.height).toBeLessThan(80);
      expect(hit?.files).toEqual({ original_name: "notice photo.jpg", file_type: "image" });
    });

    it("reads a scanned PDF page by page, with page, line and a box in PDF points", async () => {
      expect(scan).toMatchObject({ status: "ready", file_type: "pdf", page_count: 2, error: null });
      const body = (await (await s.live.get("/api/search?q=volunteer%20gardeners")).json()) as SearchBody;
      const hit = body.results.find((r) => r.file_id === scan.id);
      expect(hit?.locator).toMatchObject({ page: 2, line: 6, line_end: 6, source: "ocr" });
      const bbox = hit?.locator.bbox as Box;
      // An A4 page is 595 × 842 points; the sixth line of 11 pt text starts about 3 cm down.
      expect(bbox.x).toBeGreaterThan(20);
      expect(bbox.x + bbox.width).toBeLessThan(595);
      expect(bbox.y).toBeGreaterThan(60);
      expect(bbox.y + bbox.height).toBeLessThan(200);
    });

    it("fails images that cannot be read, each with its reason", async () => {
      const text = await makeTextImage({ lines: NOTICE, format: "jpeg" });
      const cases: [Buffer, string, string, RegExp][] = [
        [makeDecompressionBomb(), "bomb.png", "image_too_large", /20000 × 20000 pixels/],
        [text.data.subarray(0, Math.floor(text.data.length / 2)), "cut.jpg", "image_corrupt", /truncated/],
        // A PNG's signature and header, and no pixels at all.
        [
          Buffer.from("89504e470d0a1a0a0000000d494844520000006400000064080000009e4b9f69", "hex"),
          "hollow.png",
          "image_corrupt",
          /damaged/,
        ],
      ];
      for (const [data, name, code, message] of cases) {
        const f = await uploadReady(s.live, data, name);
        expect(f).toMatchObject({ status: "failed", error: { code } });
        expect(f.error?.message).toMatch(message);
      }
    }, 60_000);
  });
}
