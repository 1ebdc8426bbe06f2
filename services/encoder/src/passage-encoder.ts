import { isZero, type Embedder } from "@locus/embedder";
import type { FileRef, PassageVectorWriter, SearchIndex } from "@locus/search-index";

/** What the meaning stage tells whoever counts (metrics). */
export interface EncoderObserver {
  /** `count` passages were given vectors by `engine` (the embedder's name). */
  passagesEncoded(engine: string, count: number): void;
}

/**
 * Passages read, encoded and stored at a time. Each store is one write (and makes searches reload
 * the user's vectors), so not too few; a page is about two seconds of the encoder's work on one
 * core, so a file deleted meanwhile is not encoded long after.
 */
export const ENCODE_PAGE = 256;

/**
 * The meaning stage: gives a file's passages, already searchable by keyword, the vectors of the
 * offline engine (the sentence encoder) in the `local` slot. Reads only the passages still
 * without a vector of the engine's space, so a redelivered message, or a file encoded in part
 * before its worker stopped, costs only what is left; and each vector is stored only where the
 * passage still holds the text it was made from, so a file deleted or indexed again meanwhile
 * keeps what it has now.
 */
export class PassageEncoder {
  constructor(
    private readonly index: SearchIndex & PassageVectorWriter,
    private readonly embedder: Embedder,
    private readonly observer?: EncoderObserver,
    private readonly pageSize = ENCODE_PAGE,
  ) {}

  /**
   * Encodes what the file lacks; returns how many passages got vectors. With `signal`, stops
   * between pages once it is aborted (a process stopping), throwing its reason: what was stored
   * stays, and the next run encodes the rest.
   */
  async encodeFile(file: FileRef, signal?: AbortSignal): Promise<number> {
    const { space, name } = this.embedder;
    let stored = 0;
    let afterOrd: number | undefined;
    for (;;) {
      signal?.throwIfAborted();
      const page = await this.index.passagesWithoutVector({
        file,
        slot: "local",
        space,
        limit: this.pageSize,
        ...(afterOrd === undefined ? {} : { afterOrd }),
      });
      if (page.length === 0) break;
      const vectors = await this.embedder.embed(page.map((p) => p.content));
      // A passage with nothing to go on gets no vector (a zero vector matches nothing); it is
      // passed over by ord, so it is not read again in this run.
      const encoded = page.flatMap((passage, i) => {
        const vector = vectors[i];
        return vector && !isZero(vector) ? [{ ...passage, vector }] : [];
      });
      if (encoded.length > 0) {
        const written = await this.index.setPassageVectors(file, "local", space, encoded);
        stored += written;
        this.observer?.passagesEncoded(name, written);
      }
      afterOrd = page.at(-1)?.ord;
      if (page.length < this.pageSize) break;
    }
    return stored;
  }
}
