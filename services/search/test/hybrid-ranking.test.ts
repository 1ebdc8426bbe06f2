import type { VectorMatching } from "@locus/embedder";
import type { PassageHit } from "@locus/search-index";
import { fuse, rankAi } from "../src/index.ts";

/**
 * ai mode's fusion of the keyword and vector rankings (rankAi), on hand-made hit lists: what each
 * list and each engine setting does to the order, without an index or a model.
 */
const hit = (id: string, content: string, score = 0.5): PassageHit => ({
  id,
  fileId: "file",
  ord: 0,
  content,
  score,
  locator: { source: "text", page: 1, line: 1 },
});

const ENCODER_LIKE: VectorMatching = { floor: 0.3, weight: 3, rankConstant: 2 };
const ids = (fused: readonly { hit: PassageHit }[]) => fused.map((f) => f.hit.id);

describe("fuse", () => {
  it("orders by summed reciprocal ranks, the best possible score being 1", () => {
    const a = hit("a", "");
    const b = hit("b", "");
    const c = hit("c", "");
    const fused = fuse(
      [
        [a, b],
        [a, c],
      ],
      undefined,
      20,
    );
    expect(ids(fused)).toEqual(["a", "b", "c"]);
    expect(fused[0]?.score).toBeCloseTo(1);
    expect(fused[1]?.score).toBeLessThan(1);
  });

  it("lets a smaller rank constant keep one list's first place above another's second in both", () => {
    const first = hit("first", "");
    const both = hit("both", "");
    const other = hit("other", "");
    const lists = [
      [other, hit("another", ""), both],
      [first, both],
    ];
    // `both` is in each list, third and second; `first` is first in the heavier one only.
    expect(ids(fuse(lists, [1, 3], 20))[0]).toBe("both");
    expect(ids(fuse(lists, [1, 3], 2))[0]).toBe("first");
  });
});

describe("rankAi", () => {
  it("puts the passage holding every word of the query above passages only close in meaning", () => {
    const exact = hit("exact", "The reset-dirs element clears the font directory list.");
    const partial = hit("partial", "Every directory is listed in the configuration.");
    const near = [
      hit("near-1", "Fonts are looked for in the folders the configuration names.", 0.7),
      hit("near-2", "Cached font information is kept per folder.", 0.6),
    ];
    const keyword = [partial, exact];
    const fused = rankAi("reset-dirs directory element", keyword, [...near, exact], ENCODER_LIKE);
    expect(ids(fused)[0]).toBe("exact");
    // Without the list of whole matches, the vectors' first neighbour would come first.
    const withoutWhole = fuse([keyword, [...near, exact]], [1, 3], 2);
    expect(ids(withoutWhole)[0]).toBe("near-1");
  });

  it("ranks a paraphrase first when no keyword hit holds the whole query", () => {
    const answer = hit("answer", "Returns are refunded within five working days.", 0.62);
    const keyword = [hit("k1", "How long is the train ride?"), hit("k2", "Money can be sent by post.")];
    const fused = rankAi("How long until I get my money back?", keyword, [answer], ENCODER_LIKE);
    expect(ids(fused)[0]).toBe("answer");
  });

  it("leaves out vector neighbours below the engine's floor", () => {
    const weak = hit("weak", "Unrelated text.", 0.1);
    expect(ids(rankAi("anything at all", [], [weak], ENCODER_LIKE))).toEqual([]);
  });

  it("weights BM25 up for a one-word query, whose every keyword hit holds it", () => {
    const once = hit("once", "The configuration file is read at start.");
    const near = hit("near", "Settings are read from a file at start.", 0.8);
    expect(ids(rankAi("configuration", [once], [near], ENCODER_LIKE))).toEqual(["once", "near"]);
  });
});
