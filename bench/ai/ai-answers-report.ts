import type { Target } from "../harness/targets.ts";
import { pct, shareCells, type AiAnswersResult, type AiAnswersSetFigures } from "./ai-answers.ts";

/** The goals: on the test set, answers stated and cited; unanswerable questions left unanswered. */
export const AI_ANSWER_GOALS = { answerRate: 0.75, falseAnsweredRate: 0.1 } as const;

const testSet = (r: AiAnswersResult | null) => r?.sets.find((s) => s.set === "test" && s.questions > 0);

export function aiAnswersTargets(r: AiAnswersResult | null): Target[] {
  const test = testSet(r);
  const answer = test?.answer;
  const falseAnswered = test?.falseAnswered;
  return [
    {
      name: "ai answers on real manuals (test set): summary states the answer and cites its lines",
      goal: `≥ ${AI_ANSWER_GOALS.answerRate * 100}%`,
      measured: answer && answer.rate !== null ? pct(answer) : "not measured",
      pass: answer && answer.rate !== null ? answer.rate >= AI_ANSWER_GOALS.answerRate : null,
    },
    {
      name: "ai answers on real manuals (test set): unanswerable questions answered",
      goal: `≤ ${AI_ANSWER_GOALS.falseAnsweredRate * 100}%`,
      measured: falseAnswered && falseAnswered.rate !== null ? pct(falseAnswered) : "not measured",
      pass:
        falseAnswered && falseAnswered.rate !== null
          ? falseAnswered.rate <= AI_ANSWER_GOALS.falseAnsweredRate
          : null,
    },
  ];
}

const row = (s: AiAnswersSetFigures) => [
  `${s.set} (${s.answerable} answerable, ${s.unanswerable} not)`,
  ...shareCells(s),
  `${s.latencyMs.p50 ?? "–"} / ${s.latencyMs.p95 ?? "–"}`,
];

const SHOWN_MISSES = 10;

/** Text of a document as Markdown shows it: one line, its <tags>, * and _ not read as markup. */
const plain = (text: string) =>
  text
    .replace(/\s+/g, " ")
    .replace(/</g, "&lt;")
    .replace(/([*_`\\])/g, "\\$1");

/** The "ai answers (real manuals)" section of the bench report. */
export function renderAiAnswers(r: AiAnswersResult): string[] {
  const out: string[] = [];
  out.push("## ai answers (real manuals)", "");
  out.push(
    "Whether ai mode's summary answers the question, on material nobody wrote for the tests: three real manuals from Debian packages " +
      `(${r.files.map((f) => `\`${f.name}\``).join(", ")}; provenance and licences in \`bench/fixtures/quality/README.md\`) and ` +
      "hand-written questions, each with the sentence that answers it and that sentence's lines as `pdftotext -layout` prints them " +
      "(non-empty lines from the top of the page), plus questions the manuals do not answer. The manuals are uploaded as one user " +
      `and every question is asked once, one at a time (\`GET /api/search?mode=ai&limit=${r.limit}\`, all-in-one, summary: ` +
      `${r.summarySources.join(", ") || "–"}, vectors: ${r.vectorSources.join(", ") || "–"}). Questions: ${r.questionsFrom}. ` +
      "The set is split into dev (looked at while tuning) and test (the goals are on test).",
    "",
  );
  out.push(
    `**Answer**: a citation in the question's file, on its page, with lines meeting the answer's lines, and the summary holds at least ` +
      `${Math.round(r.minContentShare * 100)}% of the answer sentence's distinct content words (stop words dropped). **Whole**: the answer ` +
      "sentence's words one after another in the summary (its markers [n] ignored). **Citation precision**: citation entries at the answer's " +
      "lines, over the answered answerable questions. **False answered**: unanswerable questions with `answered: true`. **hit@5**: a result " +
      "at the answer's lines among the first five (retrieval, for context). Latency is client-side, after one unmeasured ai search.",
    "",
  );
  const test = r.sets.find((s) => s.set === "test");
  const dev = r.sets.find((s) => s.set === "dev");
  const head = [
    "set",
    "answer",
    "whole",
    "citation precision",
    "answerable answered",
    "false answered",
    "hit@5",
    "p50 / p95 ms",
  ];
  if (test) out.push(table(head, [row(test)]), "");
  if (dev && dev.questions > 0)
    out.push(
      `dev: answer ${pct(dev.answer)}, whole ${pct(dev.whole)}, citation precision ${pct(dev.citationPrecision)}, ` +
        `false answered ${pct(dev.falseAnswered)}, hit@5 ${pct(dev.retrievalHitAt5)}.`,
      "",
    );
  if (!r.fixedUserId) out.push("The user did not get its fixed id: ranks may differ from run to run.", "");
  const misses = test?.misses ?? [];
  if (misses.length > 0) {
    out.push(
      `Test-set misses (${misses.length}${misses.length > SHOWN_MISSES ? `, the first ${SHOWN_MISSES}` : ""}):`,
      "",
    );
    for (const m of misses.slice(0, SHOWN_MISSES))
      out.push(
        `- "${plain(m.q)}" ${m.answerable ? `(truth ${m.truth}; answered ${m.answered})` : "(unanswerable; answered)"}: ` +
          `"${plain(m.summary)}${m.summary.length >= 160 ? "…" : ""}"`,
      );
    out.push("", "Every miss, with its citations, in `latest.json` (`aiAnswers.sets[].misses`).", "");
  }
  return out;
}

const table = (head: string[], rows: string[][]) =>
  [
    `| ${head.join(" | ")} |`,
    `| ${head.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
