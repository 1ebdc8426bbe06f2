import PDFDocument from "pdfkit";

export interface PdfSpec {
  /** Text lines of each page, top to bottom; an empty page array makes a page with no text layer. */
  pages: string[][];
  /** Protect the PDF with this user password. */
  userPassword?: string;
  fontSize?: number;
}

/**
 * Makes a real PDF (through pdfkit) whose page and line layout is known, so tests can check the
 * page and line a search reports.
 */
export function makePdf(spec: PdfSpec): Promise<Buffer> {
  const doc = new PDFDocument({
    size: "A4",
    autoFirstPage: false,
    ...(spec.userPassword
      ? { userPassword: spec.userPassword, ownerPassword: `${spec.userPassword}-owner` }
      : {}),
    info: { Title: "Locus test document", CreationDate: new Date(0) },
  });
  const chunks: Buffer[] = [];
  doc.on("data", (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  for (const lines of spec.pages) {
    doc.addPage();
    if (lines.length === 0) {
      // A drawing and no text: a page without a text layer, like a scan.
      doc.rect(72, 72, 200, 100).fill("#888888");
      continue;
    }
    // Each line at an explicit position, so the layout (and so the line numbers) is exactly the spec's.
    const size = spec.fontSize ?? 11;
    doc.fontSize(size);
    lines.forEach((line, i) => doc.text(line, 72, 60 + i * size * 1.5, { lineBreak: false }));
  }
  doc.end();
  return done;
}

/** A page of filler lines with a phrase placed on one known line. */
export function pageWith(phrase: string, onLine: number, lineCount = 30): string[] {
  return Array.from({ length: lineCount }, (_, i) =>
    i + 1 === onLine ? phrase : `Line ${i + 1} carries ordinary filler words about weather and tea.`,
  );
}

/**
 * A one-page PDF whose page holds tens of thousands of tiny text pieces: valid, but slow to read
 * (seconds), like a file built to stall a reader.
 */
export function makeSlowPdf(pieces = 80_000): Promise<Buffer> {
  const doc = new PDFDocument({ size: "A4", info: { CreationDate: new Date(0) } });
  const chunks: Buffer[] = [];
  doc.on("data", (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  doc.fontSize(2);
  for (let i = 0; i < pieces; i++) {
    doc.text(`w${i}`, (i % 50) * 10, 20 + (Math.floor(i / 50) % 400) * 2, { lineBreak: false });
  }
  doc.end();
  return done;
}
