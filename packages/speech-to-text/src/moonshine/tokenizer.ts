/**
 * Moonshine's tokenizer, as its authors' `tokenizer.bin` stores it: the pieces of a SentencePiece
 * vocabulary in id order, each as its length (one byte, or two when 128 or more: the low seven
 * bits first) and its bytes. "▁" marks a space; pieces of single raw bytes carry characters the
 * vocabulary lacks, so a text is the pieces' bytes joined and read as UTF-8.
 */
export class MoonshineTokenizer {
  /** Ids below this are <unk>, <s> and </s>: never text. */
  static readonly FIRST_TEXT_ID = 3;
  static readonly START = 1;
  static readonly END = 2;

  private constructor(private readonly pieces: readonly Uint8Array[]) {}

  static parse(data: Uint8Array): MoonshineTokenizer {
    const pieces: Uint8Array[] = [];
    let at = 0;
    while (at < data.length) {
      let length = data[at++] ?? 0;
      if (length >= 128) length = (length & 127) | ((data[at++] ?? 0) << 7);
      if (at + length > data.length) throw new Error("the tokenizer file is cut off");
      pieces.push(data.subarray(at, at + length));
      at += length;
    }
    return new MoonshineTokenizer(pieces);
  }

  get size(): number {
    return this.pieces.length;
  }

  /** The text of a sequence of ids (special ids and ids past the vocabulary are skipped). */
  decode(ids: readonly number[]): string {
    const bytes = ids
      .filter((id) => id >= MoonshineTokenizer.FIRST_TEXT_ID)
      .map((id) => this.pieces[id])
      .filter((piece): piece is Uint8Array => piece !== undefined);
    return Buffer.concat(bytes).toString("utf8").replaceAll("\u2581", " ").replace(/\s+/g, " ").trim();
  }
}
