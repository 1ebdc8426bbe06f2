export {
  activeSpan,
  Attr,
  contextFrom,
  errorType,
  failSpan,
  inSpan,
  SpanKind,
  SpanStatusCode,
  startSpan,
  traceHeaders,
  withSpan,
  type Attributes,
  type Span,
  type SpanOptions,
} from "./spans.ts";
export { startTracing, type Tracing, type TracingLogger, type TracingSettings } from "./start-tracing.ts";
