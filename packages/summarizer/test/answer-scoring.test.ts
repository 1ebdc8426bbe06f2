import { LocalEmbedder } from "@locus/embedder";
import { askedQuestion, coverage, focusOn, meetsCue, notProse } from "../src/index.ts";

let embedder: LocalEmbedder;
beforeAll(async () => {
  embedder = await LocalEmbedder.load();
}, 120_000);

const asked = (q: string) => askedQuestion(q, (w) => embedder.weight(w));

describe("askedQuestion", () => {
  it("keeps the words that say what about, rare ones weighing more, and drops the asking words", () => {
    const q = asked("How do I exclude a whole directory of fonts with a filename pattern?");
    expect([...q.terms.keys()].sort()).toEqual([
      "directori",
      "exclud",
      "filenam",
      "font",
      "pattern",
      "whole",
    ]);
    expect(q.terms.get("filenam")!.weight).toBeGreaterThan(q.terms.get("whole")!.weight);
    // A word the vectors do not know (an identifier) is rare: it counts fully.
    expect(asked("Where does asn1Parser write its output?").terms.get("asn1parser")?.weight).toBe(1);
  });

  it("hears what kind of answer the first words ask for", () => {
    expect(asked("How many pages can a cover text have?").cue).toBe("number");
    expect(asked("When is the cache rebuilt?").cue).toBe("time");
    expect(asked("Who recorded the prompts?").cue).toBe("name");
    expect(asked("Why can a large voice be too big to compile?").cue).toBe("reason");
    expect(asked("Which licence applies?").cue).toBeUndefined();
    expect(meetsCue(asked("Why is it slow?"), "It is slow because the C compiler runs out of memory.")).toBe(
      true,
    );
    expect(meetsCue(asked("How many words may a Back-Cover Text have?"), "At most 25 words.")).toBe(true);
    expect(meetsCue(asked("Why is it slow?"), "It is slow.")).toBe(false);
  });
});

describe("coverage", () => {
  it("is the weighted share of the question's words the sentence has, by stem", () => {
    const q = asked("Which licence covers the code examples?");
    expect(coverage(q, "The code examples are covered by the GPL.").share).toBeGreaterThan(0.5);
    expect(coverage(q, "Nothing about that here.").share).toBe(0);
  });

  it("counts a word close in meaning, in part, when given word vectors", () => {
    const q = asked("Which licence covers the code examples?");
    const sentence = "Permission is granted under the terms of this License.";
    const vectorOf = (w: string) => embedder.wordVector(w);
    // "licence" and "license" stem apart; their vectors are close.
    expect(coverage(q, sentence).share).toBe(0);
    expect(coverage(q, sentence, vectorOf).share).toBeGreaterThan(0.1);
  });
});

describe("focusOn", () => {
  it("counts a word in most passages (the documents' topic) a third, and tells the share no passage has", () => {
    const passages = [
      "Libtasn1 parses ASN.1 definitions.",
      "Libtasn1 encodes DER.",
      "The libtasn1 functions return codes.",
    ];
    const { asked: focused, unseen } = focusOn(asked("Does libtasn1 support the XER encoding?"), passages);
    const weight = (stem: string) => focused.terms.get(stem)?.weight ?? 0;
    expect(weight("libtasn1")).toBeCloseTo(1 / 3);
    expect(weight("xer")).toBeCloseTo(1, 1);
    expect(unseen).toBeGreaterThan(0.3);
    expect(focusOn(asked("Does libtasn1 encode DER?"), passages).unseen).toBe(0);
  });
});

describe("notProse", () => {
  it("passes prose, and penalises formula and table debris, code, headings and fragments", () => {
    const prose = [
      "Fonts matched by an rejectfont element are excluded from the set of fonts used to resolve list and match requests.",
      "As of 1.2 initial scripts have been added to aid the conversion of FestVox voices to Flite.",
    ];
    for (const s of prose) expect(notProse(s, true)).toBe(0);
    const debris = [
      "( ) If CRCu M(x), v( (x) for some initial value)",
      "prgname String String Name of the running program fontformat String String Format of the font",
      "int asn1_der_coding (asn1_node element, const char * name, void * ider, int * len, char * ErrorDescription)",
      "3.1 Invoking asn1Parser asn1Parser reads a single file with ASN.1 definitions",
      "with two binary incompatible versions of the library, thanks to symbol versioning.",
    ];
    for (const s of debris) expect([s, notProse(s, true) >= 0.1]).toEqual([s, true]);
    // A transcript has no punctuation at all: no penalty for lacking it.
    expect(notProse("please leave your message after the tone", false)).toBe(0);
  });
});
