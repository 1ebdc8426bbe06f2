import { NO_ANSWER, type CitablePassage, type Summarizer, type Summary } from "../src/index.ts";

/**
 * What every Summarizer must do, whatever writes the words. Two parts:
 * - `form`: a summary may cite only the passages it was given, numbers its markers in order, quotes
 *   words its passages hold, and a summary that does not answer says so and cites nothing. Any
 *   engine, a model behind a scripted server too.
 * - `judgement`: it answers questions its passages answer, citing the passage that does, and says
 *   nothing of questions no passage touches. Engines that read for themselves (not a scripted server).
 *
 * The passages are lines of real manuals (bench/fixtures/quality, pdftotext -layout) and of
 * everyday documents, in the windows of lines Locus indexes.
 */
export interface SummarizerHarness {
  summarizer: Summarizer;
  close?(): Promise<void>;
}

const passage = (n: number, fileName: string, lines: readonly string[]): CitablePassage => ({
  n,
  fileName,
  fileId: `id-of-${fileName}`,
  content: lines.join("\n"),
});

export const CONTRACT_PASSAGES: readonly CitablePassage[] = [
  passage(1, "libtasn1.pdf", [
    "The library uses the GNU autotools. To build and install it, type ./configure, then make",
    "and make install. The self-tests run with make check, and the manual is built with",
    "texinfo. See the INSTALL file for the options configure accepts.",
  ]),
  passage(2, "libtasn1.pdf", [
    "  • Distinguished Encoding Rules (DER) encoding support.",
    "  • No limits for INTEGER and ENUMERATED values.",
    "  • It’s Free Software. Anybody can use, modify, and redistribute the library under the",
    "    terms of the GNU Lesser General Public License version 2.1 or later. The command",
    "    line tools, self-tests and build infrastructure are licensed under the GNU General Public",
  ]),
  passage(3, "returns.pdf", [
    "The refund will be paid to your card within five business days after the returned item",
    "reaches our warehouse.",
  ]),
  passage(4, "flite.pdf", [
    "   Simple conversion scripts are given as examples of the stages you need to go through.",
    "These are designed to work on standard (English) diphone sets, and simple limited domain",
    "voices. The conversion technique will almost certainly fail for large unit selection voices",
    "due to limitations in the C compiler (more discussion below).",
  ]),
];

/** Questions the passages answer, each with the passage that does. */
export const ANSWERED: readonly { question: string; passage: number }[] = [
  { question: "Which licence can I use the library under?", passage: 2 },
  { question: "When will my refund be paid to my card?", passage: 3 },
  { question: "How do I build and install the library?", passage: 1 },
];

/** Questions no passage touches. */
export const UNANSWERED: readonly string[] = [
  "How do I make a sourdough starter from scratch?",
  "What is the fastest train from Paris to London?",
];

const words = (text: string) => text.replace(/\s+/g, " ").trim();

/** The form every summary must have, given `passages`. */
export function formProblems(summary: Summary, passages: readonly CitablePassage[]): string[] {
  const problems: string[] = [];
  if (!summary.source) problems.push("no source");
  if (!summary.answered) {
    if (summary.citations.length > 0) problems.push("cites passages without answering");
    if (summary.text !== NO_ANSWER) problems.push(`says "${summary.text}" without answering`);
    return problems;
  }
  if (summary.citations.length === 0) problems.push("answers citing nothing");
  const markers = [...summary.text.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
  const firstSeen = [...new Set(markers)];
  if (firstSeen.some((n, i) => n !== i + 1))
    problems.push(`markers not numbered in order: ${firstSeen.join(",")}`);
  const cited = new Set(summary.citations.map((c) => c.n));
  for (const n of firstSeen) if (!cited.has(n)) problems.push(`marker [${n}] has no citation`);
  for (const c of summary.citations) {
    if (!firstSeen.includes(c.n)) problems.push(`citation ${c.n} has no marker in the text`);
    const source = passages.find((p) => p.n === c.passage);
    if (!source) problems.push(`citation ${c.n} names passage ${c.passage}, which was not given`);
    else if (!words(source.content).includes(words(c.quote)))
      problems.push(`citation ${c.n} quotes words passage ${c.passage} does not hold: "${c.quote}"`);
  }
  return problems;
}

export function describeSummarizerContract(
  name: string,
  make: () => Promise<SummarizerHarness>,
  parts: { judgement: boolean },
): void {
  describe(`Summarizer contract: ${name}`, () => {
    let harness: SummarizerHarness;
    beforeAll(async () => {
      harness = await make();
    }, 120_000);
    afterAll(() => harness.close?.());

    it("cites only the passages it was given, marks them in order and quotes their own words", async () => {
      for (const question of [...ANSWERED.map((a) => a.question), ...UNANSWERED]) {
        const summary = await harness.summarizer.summarize(question, CONTRACT_PASSAGES);
        expect([question, formProblems(summary, CONTRACT_PASSAGES)]).toEqual([question, []]);
      }
    });

    it("answers nothing from no passages", async () => {
      const summary = await harness.summarizer.summarize(ANSWERED[0]!.question, []);
      expect(summary).toMatchObject({ answered: false, citations: [], text: NO_ANSWER });
    });

    if (!parts.judgement) return;

    it("answers the questions its passages answer, citing the passage that does first", async () => {
      for (const { question, passage: answering } of ANSWERED) {
        const summary = await harness.summarizer.summarize(question, CONTRACT_PASSAGES);
        expect([question, summary.answered, summary.citations[0]?.passage]).toEqual([
          question,
          true,
          answering,
        ]);
      }
    });

    it("says the passages do not answer questions none of them touches", async () => {
      for (const question of UNANSWERED) {
        const summary = await harness.summarizer.summarize(question, CONTRACT_PASSAGES);
        expect([question, summary.answered]).toEqual([question, false]);
      }
    });
  });
}
