export {
  NO_ANSWER,
  noAnswer,
  SummarizerError,
  type CitablePassage,
  type Summarizer,
  type Summary,
  type SummaryCitation,
} from "./summarizer.ts";
export {
  ANSWER_FLOOR,
  ExtractiveSummarizer,
  scoreOf,
  type ExtractiveOptions,
  type ScoredSentence,
} from "./extractive-summarizer.ts";
export { breaksAfter, refersBack, sentencesOf, type ContentSentence } from "./sentences.ts";
export {
  askedQuestion,
  coverage,
  focusOn,
  meetsCue,
  notProse,
  type AnswerCue,
  type AskedQuestion,
  type SentenceMatch,
  type WordVectorOf,
} from "./answer-scoring.ts";
export { citedSummary, OpenAiSummarizer, type OpenAiSummarizerOptions } from "./openai-summarizer.ts";
