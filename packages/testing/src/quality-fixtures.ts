import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The real-material fixtures of the quality benchmark (bench/fixtures/quality: manuals shipped in
 * Debian packages, with queries written against them; its README says where each comes from).
 */
export const QUALITY_FIXTURES = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "..",
  "bench",
  "fixtures",
  "quality",
);

/** The manuals both shapes' indexes are compared on (ranking parity). */
export const PARITY_MANUALS = ["fontconfig-user.pdf", "libtasn1.pdf", "flite.pdf"] as const;

/** The ranking-parity queries: the quality set's PDF queries and every hand-written question, each once. */
export function parityQueries(): string[] {
  const read = <T>(name: string) => JSON.parse(readFileSync(join(QUALITY_FIXTURES, name), "utf8")) as T;
  const quality = read<{ documentQueries: { kind: string; q: string }[]; aiQuestions: { q: string }[] }>(
    "queries.json",
  );
  const answers = read<{ questions: { q: string }[] }>("answers.json");
  return [
    ...new Set([
      ...quality.documentQueries.filter((q) => q.kind === "pdf").map((q) => q.q),
      ...quality.aiQuestions.map((q) => q.q),
      ...answers.questions.map((q) => q.q),
    ]),
  ];
}
