// The report as latest.json holds it: every section's figures and options, the targets, the machine
// and where each section comes from. Only the shape: reporting/report-writer.ts writes it.
import type { AiAnswersOptions, AiAnswersResult } from "../ai/ai-answers.ts";
import type { AiBenchOptions, AiBenchResult } from "../ai/ai-search.ts";
import type { DocumentsBenchOptions, DocumentsBenchResult } from "../documents/documents.ts";
import type { Machine } from "../harness/machine.ts";
import type { Section, SectionOrigin, Target } from "../harness/targets.ts";
import type { MediaBenchOptions, MediaBenchResult } from "../media/media.ts";
import type { OcrBenchOptions, OcrBenchResult } from "../ocr/ocr.ts";
import type { PdfBenchOptions, PdfBenchResult } from "../pdf/pdf-ingestion.ts";
import type { DocumentsQualityOptions, DocumentsQualityResult } from "../quality/documents-quality.ts";
import type { QualityBenchOptions, QualityBenchResult } from "../quality/quality.ts";
import type { SearchBenchOptions, SearchSizeResult } from "../search/search-latency.ts";
import type { SplitBenchOptions, SplitBenchResult } from "../split/split.ts";

export interface Report {
  date: string;
  durationSeconds: number;
  machine: Machine;
  /** What was run: the benchmark options, for comparing like with like. */
  options: {
    search: SearchBenchOptions | null;
    ai: AiBenchOptions | null;
    pdf: PdfBenchOptions | null;
    ocr: OcrBenchOptions | null;
    media: MediaBenchOptions | null;
    split: SplitBenchOptions | null;
    quality?: QualityBenchOptions | null;
    /** ai answers on the real manuals: run with the ai section. */
    aiAnswers?: AiAnswersOptions | null;
    documents?: DocumentsBenchOptions | null;
    documentsQuality?: DocumentsQualityOptions | null;
  };
  targets: Target[];
  search: SearchSizeResult[];
  /** ai mode with the default engines (or LOCUS_EMBEDDER's), when that benchmark ran. */
  ai: AiBenchResult | null;
  pdf: PdfBenchResult | null;
  ocr: OcrBenchResult | null;
  media: MediaBenchResult | null;
  /** Split-shape figures, when that benchmark ran. */
  split: SplitBenchResult | null;
  /** Retrieval quality on real material (bench/fixtures/quality), when that benchmark ran. */
  quality?: QualityBenchResult | null;
  /** Whether ai mode's summaries answer hand-written questions on real manuals (with the ai section). */
  aiAnswers?: AiAnswersResult | null;
  /** Office documents to PDF: Locus's converter against the soffice command (real documents), when that benchmark ran. */
  documents?: DocumentsBenchResult | null;
  /** Retrieval quality on real office and text documents (bench/fixtures/documents/queries.json), when that benchmark ran. */
  documentsQuality?: DocumentsQualityResult | null;
  /** Benchmarks that crashed, with the error. */
  errors: { benchmark: string; error: string }[];
  /** Sections a partial run (`--only`) kept from earlier reports, each with the date it was measured. */
  carriedOver?: Partial<Record<Section, string>>;
  /** Every section with figures: when and at which commit it was measured, and whether by this run. */
  sections?: Partial<Record<Section, SectionOrigin>>;
}
