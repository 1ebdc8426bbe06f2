export {
  NO_ANSWER,
  noAnswer,
  SummarizerError,
  type CitablePassage,
  type Summarizer,
  type Summary,
  type SummaryCitation,
} from "./summarizer.ts";
export { ExtractiveSummarizer, sentencesOf, type ExtractiveOptions } from "./extractive-summarizer.ts";
export { citedSummary, OpenAiSummarizer, type OpenAiSummarizerOptions } from "./openai-summarizer.ts";
