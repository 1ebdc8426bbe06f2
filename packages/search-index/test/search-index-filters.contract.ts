// The file filter every SearchIndex applies inside its queries (search and vectorSearch), as part
// of the shared contract (searchIndexContract runs these for every backend).

import { randomUUID } from "node:crypto";
import type { FileFilter } from "@locus/contracts";
import type {
  FileAttributes,
  FilePassages,
  IndexedFile,
  IndexedPassage,
  SearchIndex,
} from "../src/search-index.ts";
import { streamOf, textPassage } from "./search-index.contract.ts";

const SPACE = "test-space";

/** A unit vector of 4 dimensions. */
const unit = (...values: number[]) => {
  const length = Math.hypot(...values);
  return Float32Array.from(values, (v) => v / length);
};

const passage = (content: string, line: number, vector: Float32Array): IndexedPassage => ({
  ...textPassage(content, 1, line),
  vectors: { local: { space: SPACE, vector } },
});

/** The files of one user every filter case searches: three with attributes, one without. */
const FIXTURE: Record<"pdf" | "image" | "audio", FileAttributes> = {
  pdf: {
    fileType: "pdf",
    createdAt: "2024-01-10T00:00:00.000Z",
    // Keys named like object internals are valid metadata keys, and must stay plain keys
    // (`__proto__` itself is refused at upload and in filters: see METADATA_LIMITS.keyPattern).
    metadata: { project: "apollo", year: 2024, draft: true, tags: ["red", "blue"], constructor: "own" },
  },
  image: {
    fileType: "image",
    createdAt: "2024-02-10T00:00:00.000Z",
    metadata: { project: "gemini", year: 2023, draft: false, tags: ["blue"], ratio: 1.5 },
  },
  audio: {
    fileType: "audio",
    createdAt: "2024-03-10T00:00:00.000Z",
    metadata: { project: "apollo", year: 2023 },
  },
};
type Label = keyof typeof FIXTURE | "bare";

/**
 * Each condition alone and combined: the filter (from the fixture's file ids) and the files it
 * must select, in keyword and in vector search alike.
 */
const CASES: Array<[string, (ids: Record<Label, string>) => FileFilter, Label[]]> = [
  ["no filter", () => ({}), ["pdf", "image", "audio", "bare"]],
  [
    "empty lists and metadata restrict nothing",
    () => ({ fileIds: [], fileTypes: [], metadata: {} }),
    ["pdf", "image", "audio", "bare"],
  ],
  [
    "fileIds, several (the file without attributes too)",
    (ids) => ({ fileIds: [ids.pdf, ids.bare, ids.audio] }),
    ["pdf", "audio", "bare"],
  ],
  ["fileIds naming a file no one has", () => ({ fileIds: [randomUUID()] }), []],
  ["fileTypes", () => ({ fileTypes: ["pdf", "audio"] }), ["pdf", "audio"]],
  ["createdAfter, exclusive", () => ({ createdAfter: "2024-01-10T00:00:00.000Z" }), ["image", "audio"]],
  ["createdBefore, exclusive", () => ({ createdBefore: "2024-03-10T00:00:00.000Z" }), ["pdf", "image"]],
  [
    "createdAfter and createdBefore, without milliseconds",
    () => ({ createdAfter: "2024-01-10T00:00:00Z", createdBefore: "2024-03-10T00:00:00Z" }),
    ["image"],
  ],
  [
    "createdAfter a millisecond before a file",
    () => ({ createdAfter: "2024-03-09T23:59:59.999Z" }),
    ["audio"],
  ],
  ["metadata, a string", () => ({ metadata: { project: "apollo" } }), ["pdf", "audio"]],
  ["metadata, a whole number as JSON writes it", () => ({ metadata: { year: "2024" } }), ["pdf"]],
  ["metadata, a fraction", () => ({ metadata: { ratio: "1.5" } }), ["image"]],
  ["metadata, true", () => ({ metadata: { draft: "true" } }), ["pdf"]],
  ["metadata, false", () => ({ metadata: { draft: "false" } }), ["image"]],
  ["metadata, an item of a list", () => ({ metadata: { tags: "blue" } }), ["pdf", "image"]],
  ["metadata, an item of one file's list only", () => ({ metadata: { tags: "red" } }), ["pdf"]],
  ["metadata, a key named like an object's internals", () => ({ metadata: { constructor: "own" } }), ["pdf"]],
  ["metadata, two keys ANDed", () => ({ metadata: { project: "apollo", year: "2023" } }), ["audio"]],
  ["metadata, a value no file has", () => ({ metadata: { project: "mercury" } }), []],
  ["metadata, a key no file has", () => ({ metadata: { client: "apollo" } }), []],
  ["metadata, a value differing only in case", () => ({ metadata: { project: "Apollo" } }), []],
  [
    "metadata, keys no metadata can hold (a path, empty, a quote)",
    () => ({ metadata: { "project.x": "apollo", "": "apollo", 'a"b': "apollo" } }),
    [],
  ],
  [
    "every condition together",
    (ids) => ({
      fileIds: [ids.pdf, ids.image, ids.audio, ids.bare],
      fileTypes: ["image", "audio", "pdf"],
      createdAfter: "2024-01-01T00:00:00.000Z",
      createdBefore: "2024-03-01T00:00:00.000Z",
      metadata: { tags: "blue" },
    }),
    ["pdf", "image"],
  ],
  [
    "every condition together, one excluding",
    (ids) => ({ fileIds: [ids.pdf, ids.audio], fileTypes: ["image"], metadata: { project: "apollo" } }),
    [],
  ],
];

export interface FilterContractContext {
  index: () => SearchIndex;
  settle: () => Promise<void>;
}

/** The filter cases, inside the caller's describe (whose beforeEach makes `index()` a fresh index). */
export function fileFilterCases({ index, settle }: FilterContractContext): void {
  describe("file filters", () => {
    const replace = async (file: IndexedFile, passages: readonly IndexedPassage[]) => {
      await index().replaceFilePassages(file, streamOf(passages));
      await settle();
    };
    const found = async (userId: string, filter: FileFilter, limit = 20) => {
      const byWords = await index().search({ userId, text: "heron", limit, filter });
      const byVector = await index().vectorSearch({
        userId,
        slot: "local",
        space: SPACE,
        vector: unit(1, 0, 0, 0),
        limit,
        filter,
      });
      return { byWords, byVector };
    };

    /** The fixture's files for a new user (and the same files, with the same words, for another). */
    const fixture = async () => {
      const userId = randomUUID();
      const ids: Record<Label, string> = {
        pdf: randomUUID(),
        image: randomUUID(),
        audio: randomUUID(),
        bare: randomUUID(),
      };
      for (const [label, fileId] of Object.entries(ids) as [Label, string][]) {
        const attributes = label === "bare" ? undefined : FIXTURE[label];
        const content = `heron seen in the ${label} file`;
        await replace({ userId, fileId, ...(attributes ? { attributes } : {}) }, [
          passage(content, 1, unit(1, 0.1, 0, 0)),
        ]);
        // Another user's file, alike in every attribute: never found by this user's filters.
        await replace({ userId: randomUUID(), fileId: randomUUID(), ...(attributes ? { attributes } : {}) }, [
          passage(content, 1, unit(1, 0.1, 0, 0)),
        ]);
      }
      const labelOf = new Map<string, string>(Object.entries(ids).map(([label, id]) => [id, label]));
      return { userId, ids, labelOf };
    };

    it.each(CASES)(
      "%s: keyword and vector search find exactly the files it selects",
      async (_, filterOf, want) => {
        const { userId, ids, labelOf } = await fixture();
        const { byWords, byVector } = await found(userId, filterOf(ids));
        expect(byWords.map((h) => labelOf.get(h.fileId)).sort()).toEqual([...want].sort());
        expect(byVector.map((h) => labelOf.get(h.fileId)).sort()).toEqual([...want].sort());
      },
    );

    it("rejects an instant that is not one, saying which", async () => {
      const { userId } = await fixture();
      for (const filter of [{ createdAfter: "yesterday" }, { createdBefore: "2024-13-45T00:00:00Z" }]) {
        await expect(index().search({ userId, text: "heron", limit: 5, filter })).rejects.toThrow(
          /created(After|Before) .* is not an ISO 8601 instant/,
        );
        await expect(
          index().vectorSearch({
            userId,
            slot: "local",
            space: SPACE,
            vector: unit(1, 0, 0, 0),
            limit: 5,
            filter,
          }),
        ).rejects.toThrow(/is not an ISO 8601 instant/);
      }
    });

    it("never returns another user's files, even when a filter names them", async () => {
      const { userId } = await fixture();
      const theirs = { userId: randomUUID(), fileId: randomUUID(), attributes: FIXTURE.pdf };
      await replace(theirs, [passage("heron of someone else", 1, unit(1, 0, 0, 0))]);
      const { byWords, byVector } = await found(userId, { fileIds: [theirs.fileId] });
      expect(byWords).toEqual([]);
      expect(byVector).toEqual([]);
      const forThem = await found(theirs.userId, { fileTypes: ["pdf"], metadata: { project: "apollo" } });
      expect(forThem.byWords.map((h) => h.fileId)).toEqual([theirs.fileId]);
      expect(forThem.byVector.map((h) => h.fileId)).toEqual([theirs.fileId]);
    });

    it("filters before the best `limit` are taken: a file outranked by another still fills the limit", async () => {
      const userId = randomUUID();
      const strong = { userId, fileId: randomUUID(), attributes: FIXTURE.pdf };
      const weak = { userId, fileId: randomUUID(), attributes: FIXTURE.image };
      // Every passage of `strong` outranks every passage of `weak`, in words and in vectors.
      await replace(
        strong,
        Array.from({ length: 12 }, (_, i) =>
          passage(`heron heron heron ${i}`, i + 1, unit(1, 0.01 * i, 0, 0)),
        ),
      );
      await replace(
        weak,
        Array.from({ length: 5 }, (_, i) =>
          passage(
            `a heron among many other words about rivers, reeds and fish number ${i}`,
            i + 1,
            unit(1, 2 + i, 0, 0),
          ),
        ),
      );
      const unfiltered = await found(userId, {}, 3);
      expect(unfiltered.byWords.map((h) => h.fileId)).toEqual([strong.fileId, strong.fileId, strong.fileId]);
      expect(unfiltered.byVector.map((h) => h.fileId)).toEqual([strong.fileId, strong.fileId, strong.fileId]);
      for (const filter of [
        { fileIds: [weak.fileId] },
        { fileTypes: ["image"] },
        { metadata: { project: "gemini" } },
      ] as FileFilter[]) {
        const { byWords, byVector } = await found(userId, filter, 3);
        expect(byWords.map((h) => h.fileId)).toEqual([weak.fileId, weak.fileId, weak.fileId]);
        expect(byVector.map((h) => h.fileId)).toEqual([weak.fileId, weak.fileId, weak.fileId]);
        // Still best first among what passes: the nearest of weak's vectors is its first passage.
        expect(byVector.map((h) => h.ord)).toEqual([0, 1, 2]);
      }
    });

    it("a file indexed without attributes is found by file ids alone, by no filter on type, dates or metadata", async () => {
      const file = { userId: randomUUID(), fileId: randomUUID() };
      await replace(file, [passage("heron without attributes", 1, unit(1, 0, 0, 0))]);
      expect((await found(file.userId, { fileIds: [file.fileId] })).byWords).toHaveLength(1);
      for (const filter of [
        { fileIds: [file.fileId], fileTypes: ["pdf", "image", "audio", "video"] },
        { createdBefore: "2999-01-01T00:00:00.000Z" },
        { createdAfter: "1970-01-01T00:00:00.000Z" },
        { metadata: { project: "apollo" } },
      ] as FileFilter[]) {
        const { byWords, byVector } = await found(file.userId, filter);
        expect({ filter, byWords, byVector }).toEqual({ filter, byWords: [], byVector: [] });
      }
    });

    it("replacing a file's passages replaces its attributes (and a replacement without them drops them)", async () => {
      const userId = randomUUID();
      const fileId = randomUUID();
      const content = [passage("heron in a replaced file", 1, unit(1, 0, 0, 0))];
      await replace({ userId, fileId, attributes: FIXTURE.pdf }, content);
      await replace({ userId, fileId, attributes: FIXTURE.image }, content);
      const files = async (filter: FileFilter) => {
        const { byWords, byVector } = await found(userId, filter);
        expect(byVector.map((h) => h.fileId)).toEqual(byWords.map((h) => h.fileId));
        return byWords.map((h) => h.fileId);
      };
      expect(await files({ fileTypes: ["pdf"] })).toEqual([]);
      expect(await files({ metadata: { project: "apollo" } })).toEqual([]);
      expect(await files({ metadata: { tags: "red" } })).toEqual([]);
      expect(await files({ createdBefore: "2024-02-01T00:00:00.000Z" })).toEqual([]);
      expect(await files({ fileTypes: ["image"], metadata: { project: "gemini", tags: "blue" } })).toEqual([
        fileId,
      ]);
      await replace({ userId, fileId }, content);
      expect(await files({ fileTypes: ["image"] })).toEqual([]);
      expect(await files({ fileIds: [fileId] })).toEqual([fileId]);
    });

    it("deleting a file deletes its attributes: indexed again without them, its old ones find nothing", async () => {
      const file = { userId: randomUUID(), fileId: randomUUID(), attributes: FIXTURE.audio };
      const content = [passage("heron in a deleted file", 1, unit(1, 0, 0, 0))];
      await replace(file, content);
      expect((await found(file.userId, { fileTypes: ["audio"] })).byWords).toHaveLength(1);
      await index().deleteFilePassages(file);
      await settle();
      expect(await found(file.userId, { fileIds: [file.fileId] })).toEqual({ byWords: [], byVector: [] });
      await replace({ userId: file.userId, fileId: file.fileId }, content);
      expect(await found(file.userId, { fileTypes: ["audio"] })).toEqual({ byWords: [], byVector: [] });
      expect(await found(file.userId, { metadata: { project: "apollo" } })).toEqual({
        byWords: [],
        byVector: [],
      });
    });

    it("rebuild() carries each file's attributes", async () => {
      const userId = randomUUID();
      const a = { userId, fileId: randomUUID(), attributes: FIXTURE.pdf };
      const b = { userId, fileId: randomUUID(), attributes: FIXTURE.audio };
      const c = { userId, fileId: randomUUID() };
      async function* files(): AsyncGenerator<FilePassages> {
        for (const file of [a, b, c]) {
          await Promise.resolve();
          yield { file, passages: streamOf([passage(`heron rebuilt ${file.fileId}`, 1, unit(1, 0, 0, 0))]) };
        }
      }
      await index().rebuild(files());
      await settle();
      const ids = async (filter: FileFilter) => {
        const { byWords, byVector } = await found(userId, filter);
        expect(byVector.map((h) => h.fileId).sort()).toEqual(byWords.map((h) => h.fileId).sort());
        return byWords.map((h) => h.fileId).sort();
      };
      expect(await ids({ fileTypes: ["pdf"] })).toEqual([a.fileId]);
      expect(await ids({ metadata: { project: "apollo" } })).toEqual([a.fileId, b.fileId].sort());
      expect(await ids({ createdAfter: "2024-02-01T00:00:00.000Z" })).toEqual([b.fileId]);
      expect(await ids({ fileIds: [c.fileId] })).toEqual([c.fileId]);
    });
  });
}
