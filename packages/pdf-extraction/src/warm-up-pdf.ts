/**
 * A one-page PDF with a few lines of text in a standard font, made here so a new extraction thread
 * can read one document before any user's file: pdf.js's parser, font and text code are compiled
 * then, not on the first upload. Built with its cross-reference table, so nothing needs repairing.
 */
export function warmUpPdf(): Uint8Array {
  const lines = [
    "Locus reads this page when a thread starts.",
    "Its text layer has words, numbers like 3.14 and 2026,",
    "and a hyphen-",
    "ated word broken at the end of a line.",
  ];
  const text = lines.map((line, i) => `BT /F1 12 Tf 72 ${720 - i * 16} Td (${line}) Tj ET`).join("\n");
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    `<< /Length ${Buffer.byteLength(text, "latin1")} >>\nstream\n${text}\nendstream`,
  ];
  let pdf = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(pdf, "latin1"));
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(pdf, "latin1");
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) pdf += `${String(offset).padStart(10, "0")} 00000 n \n`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(pdf, "latin1"));
}
