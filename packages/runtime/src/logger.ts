import { pino, type Logger } from "pino";

export type { Logger };

/**
 * JSON logs on stdout, one line per event, with the service name on each line. Anything that
 * could hold a secret is redacted by path, and keys are never passed to the logger in the first
 * place (see gateway auth).
 */
export function createLogger(name: string, level: string): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: [
        "req.headers.authorization",
        "req.headers.cookie",
        "authorization",
        "token",
        "key",
        "password",
        "secret",
        "*.token",
        "*.key",
        "*.password",
        "*.secret",
      ],
      censor: "[redacted]",
    },
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
