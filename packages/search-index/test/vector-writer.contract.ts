import { randomUUID } from "node:crypto";
import type { EncodedPassage, FileRef, PassageVectorWriter, SearchIndex } from "../src/search-index.ts";
import { streamOf, textPassage } from "./search-index.contract.ts";

export interface VectorWriterHarness {
  index: SearchIndex & PassageVectorWriter;
  cleanup(): Promise<void>;
}

const SPACE = "local:test-encoder";
/** A unit vector of 4 dimensions pointing along `axis`. */
const axis = (n: number): Float32Array => Float32Array.from([0, 1, 2, 3], (i) => (i === n ? 1 : 0));

/**
 * What the meaning stage relies on (PassageVectorWriter): a file indexed without vectors lists its
 * passages to encode, vectors added later are searched at once, and a vector made from text the
 * passage no longer holds (the file replaced or deleted meanwhile) is never stored.
 */
export function passageVectorWriterContract(name: string, make: () => Promise<VectorWriterHarness>): void {
  describe(`PassageVectorWriter contract: ${name}`, () => {
    let harness: VectorWriterHarness;
    let index: SearchIndex & PassageVectorWriter;
    beforeEach(async () => {
      harness = await make();
      index = harness.index;
    });
    afterEach(() => harness.cleanup());

    const TEXTS = ["Gannets dive from thirty metres.", "Puffins nest in burrows.", "Terns migrate furthest."];
    const indexed = async (
      texts: readonly string[] = TEXTS,
      file: FileRef = { userId: randomUUID(), fileId: randomUUID() },
    ) => {
      await index.replaceFilePassages(file, streamOf(texts.map((t, i) => textPassage(t, 1, i + 1))));
      return file;
    };
    const encoded = (texts: readonly string[] = TEXTS): EncodedPassage[] =>
      texts.map((content, ord) => ({ ord, content, vector: axis(ord) }));
    const nearest = (file: FileRef, vector: Float32Array, space = SPACE) =>
      index.vectorSearch({ userId: file.userId, slot: "local", space, vector, limit: 3 });
    const missing = (file: FileRef, space = SPACE, afterOrd?: number, limit = 10) =>
      index.passagesWithoutVector({
        file,
        slot: "local",
        space,
        limit,
        ...(afterOrd === undefined ? {} : { afterOrd }),
      });

    it("lists a file's passages without vectors by ord, a page at a time", async () => {
      const file = await indexed();
      expect(await missing(file)).toEqual(TEXTS.map((content, ord) => ({ ord, content })));
      expect(await missing(file, SPACE, undefined, 2)).toEqual([
        { ord: 0, content: TEXTS[0] },
        { ord: 1, content: TEXTS[1] },
      ]);
      expect(await missing(file, SPACE, 1, 2)).toEqual([{ ord: 2, content: TEXTS[2] }]);
      expect(await missing({ userId: randomUUID(), fileId: file.fileId })).toEqual([]);
    });

    it("stores vectors on indexed passages: searched at once, in their space only, and no longer listed", async () => {
      const file = await indexed();
      // A search before the vectors exist (a cache of the user's vectors may keep what it read).
      expect(await nearest(file, axis(1))).toEqual([]);
      expect(await index.setPassageVectors(file, "local", SPACE, encoded())).toBe(3);
      const hits = await nearest(file, axis(1));
      expect(hits[0]).toMatchObject({ fileId: file.fileId, ord: 1, content: TEXTS[1] });
      expect(hits[0]?.score).toBeCloseTo(1, 5);
      expect(await nearest(file, axis(1), "local:another-model")).toEqual([]);
      expect(await missing(file)).toEqual([]);
      // Another engine's space still lacks them (a change of model re-encodes everything).
      expect(await missing(file, "local:another-model")).toHaveLength(3);
      // Keyword search is as it was.
      expect((await index.search({ userId: file.userId, text: "puffins", limit: 5 }))[0]?.ord).toBe(1);
    });

    it("never stores a vector made from text the passage no longer holds (the file replaced meanwhile)", async () => {
      const file = await indexed();
      const read = await missing(file);
      // The file is indexed again from a new extraction: passage 1 changed, 0 and 2 did not.
      await indexed([TEXTS[0]!, "Razorbills lay one egg.", TEXTS[2]!], file);
      const stored = await index.setPassageVectors(
        file,
        "local",
        SPACE,
        read.map((p) => ({ ...p, vector: axis(p.ord) })),
      );
      expect(stored).toBe(2);
      expect(await missing(file)).toEqual([{ ord: 1, content: "Razorbills lay one egg." }]);
    });

    it("stores nothing for a deleted file and brings none of its passages back", async () => {
      const file = await indexed();
      await index.deleteFilePassages(file);
      expect(await index.setPassageVectors(file, "local", SPACE, encoded())).toBe(0);
      expect(await nearest(file, axis(0))).toEqual([]);
      expect(await index.search({ userId: file.userId, text: "gannets", limit: 5 })).toEqual([]);
    });

    it("touches only the named user's file: the same file id under another user is another file", async () => {
      const mine = await indexed();
      const theirs = await indexed(TEXTS, { userId: randomUUID(), fileId: mine.fileId });
      expect(await index.setPassageVectors(theirs, "local", SPACE, encoded())).toBe(3);
      expect(await nearest(mine, axis(0))).toEqual([]);
      expect(await missing(mine)).toHaveLength(3);
    });

    it("an empty list stores nothing and fails nothing", async () => {
      const file = await indexed();
      expect(await index.setPassageVectors(file, "local", SPACE, [])).toBe(0);
      expect(await missing(file)).toHaveLength(3);
    });
  });
}
