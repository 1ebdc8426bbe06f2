import {
  nextPosition,
  SEARCH_LIMITS,
  type AiFallbackDto,
  type CitationDto,
  type FileFilter,
  type Locator,
  type SearchMode,
  type SearchResponseDto,
  type SearchResultDto,
  type StoredLocator,
} from "@locus/contracts";
import { dot, EmbedderError, type Embedder } from "@locus/embedder";
import { queryWords, sentenceSpans, toCodePoints } from "@locus/passages";
import type { FileRecord, FileRecordReader } from "@locus/metadata-store";
import type { Logger } from "@locus/runtime";
import { Attr, inSpan } from "@locus/telemetry";
import type { PassageHit, SearchIndex, VectorSlot } from "@locus/search-index";
import { SummarizerError, type CitablePassage, type Summarizer, type Summary } from "@locus/summarizer";
import { rankAi } from "./hybrid-ranking.ts";
import { linesOfPassage, narrowToSpans, placeMatch } from "./match-lines.ts";
import { wholeSentences, type PassageText } from "./whole-sentences.ts";

export interface SearchRequest {
  userId: string;
  q: string;
  limit: number;
  mode: SearchMode;
  /** Results to skip (paging): the page is results offset..offset+limit of the same ranking. */
  offset?: number | undefined;
  /** Only passages of files that pass it, applied inside the index before ranking is cut. */
  filter?: FileFilter | undefined;
}

/**
 * What the gateway asks of search. In one process SearchService answers directly; in the split
 * shape SearchHttpClient carries the call to the search process.
 */
export interface SearchApi {
  search(request: SearchRequest): Promise<SearchResponseDto>;
}

/**
 * The engines of ai mode. `local` ones always exist (offline); a remote one, when configured, is
 * tried first and the local one answers when it fails, which the response says (`fallbacks`).
 */
export interface AiEngines {
  /**
   * `unavailable`: the engine configured for the local slot that could not load, and why; `local`
   * stands in for it and every ai response says so in `fallbacks`.
   */
  embedders: { local: Embedder; remote?: Embedder; unavailable?: { engine: string; reason: string } };
  summarizers: { local: Summarizer; remote?: Summarizer };
}

/**
 * The most passages one search reads from the index per ranking: twice the deepest page's end
 * (offset and limit at their maxima), for the duplicates present() drops.
 */
const MAX_POOL = 2 * (SEARCH_LIMITS.offsetMax + SEARCH_LIMITS.limitMax + 1);

/** The `fallbacks` field: present only when a remote engine failed. */
const fallbacksField = (fallbacks: AiFallbackDto[]) => (fallbacks.length > 0 ? { fallbacks } : {});

/** Passages the summary reads: the best results, enough to draw on several files. */
const SUMMARY_PASSAGES = 10;

interface RankedHit {
  hit: PassageHit;
  score: number;
}

/** A result as search builds it: what the API returns, and what narrowing it further needs. */
interface Presented {
  result: SearchResultDto;
  /** The passage as the index holds it (its stored locator narrows further). */
  hit: PassageHit;
  /** Whether a word of the query is in it (else it was found by meaning alone). */
  matched: boolean;
}

/**
 * Answers searches over one user's passages. Each hit is joined to its file record, and hits whose
 * file is not `ready` (being re-indexed, or just deleted) are left out, so a result always names a
 * file the caller can fetch.
 *
 * - quick: BM25 in the index.
 * - ai: BM25 and the question's vector against the passages' vectors, fused by reciprocal rank
 *   (hybrid: exact words and paraphrases both count), then a summary of the best results with a
 *   citation for every claim.
 */
export class SearchService implements SearchApi {
  constructor(
    private readonly index: SearchIndex,
    private readonly files: FileRecordReader,
    private readonly ai: AiEngines,
    private readonly logger?: Logger,
  ) {}

  async search(request: SearchRequest): Promise<SearchResponseDto> {
    // A page is a slice of one ranking: rank as far as its end and one result more (to know
    // whether another page follows), then cut. Consecutive passages share a line, so one match
    // can surface twice: fetch extra to make up for the duplicates dropped in present().
    const offset = request.offset ?? 0;
    const throughPageEnd = { ...request, limit: offset + request.limit + 1 };
    const pool = Math.min(throughPageEnd.limit * 2, MAX_POOL);
    const page = (presented: Presented[]) => {
      const results = presented.slice(offset, offset + request.limit).map((p) => p.result);
      const next = offset + request.limit;
      // No next page past the deepest offset a request may ask for.
      const more = presented.length > next && next <= SEARCH_LIMITS.offsetMax;
      return { results, count: results.length, ...nextPosition(more ? next : null) };
    };
    if (request.mode === "quick") {
      const hits = await this.keywordHits(throughPageEnd, pool);
      return { ...page(await this.present(throughPageEnd, hits)), mode: "quick" };
    }
    // ai mode fuses two rankings by rank, and fusion depends on how long each list is: every page
    // reads the same lengths, set by `limit` alone (never the offset), so the pages are slices of one
    // ranking, which ends (next_offset null) where the fused lists do. Longer lists cost time and
    // let weaker vector neighbours in: to MAX_POOL, p50 at 100k passages went 42 -> 159 ms and
    // paraphrase hit@5 7/30 -> 4/30 (bench --only ai).
    const aiPool = Math.max(Math.min(request.limit * 2, 200), 50);
    const { presented, fallbacks, vectorSource } = await this.rankAi(throughPageEnd, aiPool);
    const found = page(presented);
    // The summary answers once, on the first page, from that page's best results (at most
    // SUMMARY_PASSAGES), so that its citations point into the results it comes with. Later pages
    // carry results only.
    if (offset > 0) {
      return { ...found, mode: "ai", vector_source: vectorSource, ...fallbacksField(fallbacks) };
    }
    const answer = await this.answer(request.q, request.userId, presented.slice(0, request.limit), fallbacks);
    return { ...found, mode: "ai", ...answer, vector_source: vectorSource, ...fallbacksField(fallbacks) };
  }

  /** ai mode's ranking: BM25 and the question's vector, fused by rank (see rankAi), as results. */
  private async rankAi(
    request: SearchRequest,
    pool: number,
  ): Promise<{ presented: Presented[]; fallbacks: AiFallbackDto[]; vectorSource: string }> {
    const fallbacks: AiFallbackDto[] = [];
    const [keyword, semantic] = await Promise.all([
      this.keywordHits(request, pool),
      this.semanticHits(request, pool, fallbacks),
    ]);
    // Fused by rank, the vectors above their floor (see rankAi).
    const fused = rankAi(request.q, keyword, semantic.hits, semantic.engine.matching);
    const presented = await this.present(request, fused);
    await this.placeByMeaning(request.q, presented);
    return { presented, fallbacks, vectorSource: semantic.engine.name };
  }

  /** The summary of the given results (the first page's), with its citations (indexes into them). */
  private async answer(
    question: string,
    userId: string,
    presented: readonly Presented[],
    fallbacks: AiFallbackDto[],
  ): Promise<Pick<SearchResponseDto, "summary" | "citations" | "answered" | "summary_source">> {
    const results = presented.map((p) => p.result);
    // The summary reads the best results widened to whole sentences; citations point into those.
    const read = await this.readWhole(
      userId,
      presented.slice(0, SUMMARY_PASSAGES).map((p) => p.hit),
    );
    const cited = read.map((passage, i): CitablePassage => ({
      n: i + 1,
      fileName: results[i]?.files.original_name ?? "",
      fileId: results[i]?.file_id ?? "",
      content: passage.content,
    }));
    const summary = await this.summarize(question, cited, fallbacks);
    const citations = summary.citations.flatMap((c): CitationDto[] => {
      const index = c.passage - 1;
      const result = results[index];
      const passage = read[index];
      if (!result || !passage) return [];
      return [
        {
          n: c.n,
          file_id: result.file_id,
          original_name: result.files.original_name,
          locator: citedPlace(passage.content, passage.stored, c) ?? result.locator,
          quote: c.quote,
          result_index: index,
        },
      ];
    });
    return {
      summary: summary.text,
      citations,
      answered: summary.answered,
      summary_source: summary.source,
    };
  }

  /** The passages with the query's words, ranked by BM25 in the index (a span of its own). */
  private keywordHits(request: SearchRequest, limit: number): Promise<PassageHit[]> {
    return inSpan("index search", { attributes: { [Attr.indexQuery]: "bm25" } }, async (span) => {
      const hits = await this.index.search({
        userId: request.userId,
        text: request.q,
        limit,
        ...(request.filter ? { filter: request.filter } : {}),
      });
      span.setAttribute(Attr.indexHits, hits.length);
      return hits;
    });
  }

  /**
   * The question's nearest passages: by the remote engine's vectors when there is one and it
   * answers, otherwise by the local vectors every passage has.
   */
  private async semanticHits(
    request: SearchRequest,
    limit: number,
    fallbacks: AiFallbackDto[],
  ): Promise<{ hits: PassageHit[]; engine: Embedder }> {
    const { local, remote, unavailable } = this.ai.embedders;
    if (unavailable) fallbacks.push({ component: "embedder", ...unavailable, used: local.name });
    const nearest = async (embedder: Embedder, slot: VectorSlot) => {
      const [vector] = await inSpan(
        "embed question",
        { attributes: { [Attr.aiEngine]: embedder.name } },
        () => embedder.embed([request.q]),
      );
      if (!vector || vector.every((v) => v === 0)) return [];
      return inSpan("index search", { attributes: { [Attr.indexQuery]: "vector" } }, async (span) => {
        const hits = await this.index.vectorSearch({
          userId: request.userId,
          slot,
          space: embedder.space,
          vector,
          limit,
          ...(request.filter ? { filter: request.filter } : {}),
        });
        span.setAttribute(Attr.indexHits, hits.length);
        return hits;
      });
    };
    if (remote) {
      try {
        return { hits: await nearest(remote, "remote"), engine: remote };
      } catch (err) {
        this.logger?.warn({ err, engine: remote.name }, "question embedding failed; using the local vectors");
        fallbacks.push({
          component: "embedder",
          engine: remote.name,
          used: local.name,
          reason: reasonOf(err),
        });
      }
    }
    return { hits: await nearest(local, "local"), engine: local };
  }

  private async summarize(
    question: string,
    passages: readonly CitablePassage[],
    fallbacks: AiFallbackDto[],
  ): Promise<Summary> {
    const { local, remote } = this.ai.summarizers;
    const summarize = (summarizer: Summarizer) =>
      inSpan("summarize", { attributes: { [Attr.aiEngine]: summarizer.name } }, () =>
        summarizer.summarize(question, passages),
      );
    if (remote && passages.length > 0) {
      try {
        return await summarize(remote);
      } catch (err) {
        this.logger?.warn({ err, engine: remote.name }, "summary failed; using the local summary");
        fallbacks.push({
          component: "summarizer",
          engine: remote.name,
          used: local.name,
          reason: reasonOf(err),
        });
      }
    }
    return summarize(local);
  }

  /**
   * The passages a summary reads, widened to whole sentences (see wholeSentences). Reading the
   * lines around them is a nicety: when the index cannot, the summary reads them as found.
   */
  private async readWhole(userId: string, hits: readonly PassageHit[]): Promise<PassageText[]> {
    try {
      return await wholeSentences(this.index, userId, hits);
    } catch (err) {
      this.logger?.warn(
        { err },
        "could not read the lines around the results; the summary reads them as found",
      );
      return hits.map((h) => ({ content: h.content, stored: h.locator }));
    }
  }

  /**
   * Results found by meaning alone (no word of the question in them) are narrowed to the sentence
   * closest to the question by the local vectors, which is highlighted: the place to read first.
   */
  private async placeByMeaning(question: string, presented: Presented[]): Promise<void> {
    const unmatched = presented.filter((p) => !p.matched);
    if (unmatched.length === 0) return;
    const sentences = unmatched.map((p) => sentenceSpans(p.result.content));
    const texts = sentences.flatMap((spans, i) =>
      spans.map((s) => unmatched[i]?.result.content.slice(s.start, s.end) ?? ""),
    );
    const [questionVector, ...vectors] = await this.ai.embedders.local.embed([question, ...texts]);
    if (!questionVector) return;
    let next = 0;
    unmatched.forEach((p, i) => {
      const spans = sentences[i] ?? [];
      let best: { span: (typeof spans)[number]; similarity: number } | undefined;
      for (const span of spans) {
        const vector = vectors[next++];
        const similarity = vector ? dot(questionVector, vector) : 0;
        if (!best || similarity > best.similarity) best = { span, similarity };
      }
      // A passage of one sentence is its own best sentence: nothing to narrow.
      if (!best || spans.length < 2) return;
      p.result.locator = narrowToSpans(p.result.content, p.hit.locator, [best.span]);
      p.result.highlights = toCodePoints(p.result.content, [best.span]);
    });
  }

  /**
   * Ranked hits as API results: joined to their files (only `ready` ones), narrowed to where the
   * query's words are, with those words highlighted, one result per place, at most `limit`. Each
   * keeps its stored locator, which citations narrow further.
   */
  private async present(
    request: SearchRequest,
    ranked: readonly (PassageHit | RankedHit)[],
  ): Promise<Presented[]> {
    const query = queryWords(request.q);
    const entries = ranked.map((r) => ("hit" in r ? r : { hit: r, score: r.score }));
    const files = new Map<string, FileRecord>(
      (
        await this.files.getFiles(
          request.userId,
          entries.map((e) => e.hit.fileId),
        )
      ).map((f) => [f.id, f]),
    );
    const presented: Presented[] = [];
    const seen = new Set<string>();
    for (const { hit, score } of entries) {
      const file = files.get(hit.fileId);
      if (!file || file.status !== "ready") continue;
      const { locator, highlights, matched } = placeMatch(hit.content, hit.locator, query);
      // The same place in the same file is one result: keep the best-scored passage for it.
      const place = JSON.stringify([
        hit.fileId,
        locator.page,
        locator.line,
        locator.line_end,
        locator.timestamp,
      ]);
      if (seen.has(place)) continue;
      seen.add(place);
      presented.push({
        result: {
          content: hit.content,
          score,
          file_id: hit.fileId,
          locator,
          files: { original_name: file.originalName, file_type: file.fileType },
          highlights,
        },
        hit,
        matched,
      });
      if (presented.length === request.limit) break;
    }
    return presented;
  }
}

/**
 * Where a citation's quote is in its passage: the quote's own words when it appears verbatim (a
 * recording's transcript: narrowed to the seconds it is said), else the lines the summary says it
 * spans; undefined when neither is known.
 */
function citedPlace(
  content: string,
  stored: StoredLocator,
  citation: { quote: string; lines?: { first: number; last: number } | undefined },
): Locator | undefined {
  const at = citation.quote.length > 0 ? content.indexOf(citation.quote) : -1;
  if (at >= 0) return narrowToSpans(content, stored, [{ start: at, end: at + citation.quote.length }]);
  if (citation.lines) return linesOfPassage(content, stored, citation.lines.first, citation.lines.last);
  return undefined;
}

/** A failure in words fit for a response: the error's message, without a stack or a secret. */
/**
 * What a client is told of a failed engine: the engine's own client-safe reason (Locus's words,
 * never the server's, which may name hosts, accounts or keys), or a plain sentence.
 */
function reasonOf(err: unknown): string {
  if (err instanceof EmbedderError || err instanceof SummarizerError) return err.reason;
  return "The engine failed.";
}
