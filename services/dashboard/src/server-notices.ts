/**
 * What a deployment may be unable to do now, each asked of the engine concerned. A check absent
 * is an engine this deployment does not depend on for the dashboard's user.
 */
export interface CapabilityChecks {
  /** Rejects, with the engine's reason, while recordings cannot be transcribed. */
  speech?: () => Promise<void>;
  /** The office converter's answer: can it convert documents to PDF here? */
  officeConversion?: () => Promise<{ ok: true } | { ok: false; reason: string }>;
  /** Where the sentence encoder was chosen: its model, and why it cannot run (undefined: it runs). */
  sentenceEncoder?: () => Promise<{ model: string; unavailable: string | undefined }>;
}

/** How often the engines are asked again: their answers change when an operator installs one. */
export const NOTICES_CHECKED_EVERY_MS = 60_000;

/**
 * The dashboard's notices: a sentence for each thing this server cannot do now (recordings when
 * the speech engine is missing, office documents when LibreOffice is, paraphrases when the
 * sentence encoder cannot run), shown on every page. The engines are asked at most once a
 * minute, whatever the traffic.
 */
export function serverNotices(
  checks: CapabilityChecks,
  now: () => number = Date.now,
): () => Promise<string[]> {
  let checked: { at: number; notices: Promise<string[]> } | undefined;
  const ask = async (): Promise<string[]> => {
    const lists = await Promise.all([
      checks.speech?.().then(
        () => [],
        (err: unknown) => [
          `Recordings cannot be transcribed on this server, so audio and video files fail: ${err instanceof Error ? err.message : String(err)}`,
        ],
      ),
      checks
        .officeConversion?.()
        .then((available) =>
          available.ok
            ? []
            : [`Office documents cannot be converted on this server, so they fail: ${available.reason}`],
        ),
      checks
        .sentenceEncoder?.()
        .then(({ model, unavailable }) =>
          unavailable
            ? [
                `ai search is degraded: the sentence encoder ${model} cannot run because ${unavailable}, so questions are matched by word vectors, which miss most paraphrases.`,
              ]
            : [],
        ),
    ]);
    return lists.flatMap((list) => list ?? []);
  };
  return () => {
    if (!checked || now() - checked.at > NOTICES_CHECKED_EVERY_MS) checked = { at: now(), notices: ask() };
    return checked.notices;
  };
}
