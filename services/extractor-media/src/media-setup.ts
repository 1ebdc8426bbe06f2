import { useFfmpeg } from "@locus/media-reader";
import type { Logger } from "@locus/runtime";
import { SpeechEngineError, type SpeechToText } from "@locus/speech-to-text";

/**
 * What both media extractors do when they start: find the ffmpeg they read with (said in the
 * log), and ask the speech engine whether it can run here. Answers the engine's error when it
 * cannot: the files that need speech then fail with its reason instead of waiting, and the log
 * says so once (`consequence`: what fails).
 */
export async function prepareMediaReading(
  deps: { ffmpegPath?: string | undefined; logger: Logger; speech: SpeechToText },
  consequence: string,
): Promise<SpeechEngineError | null> {
  const ffmpeg = await useFfmpeg(deps.ffmpegPath);
  deps.logger.info(
    { ffmpeg: ffmpeg.path, source: ffmpeg.source, version: ffmpeg.version, ffprobe: ffmpeg.ffprobe },
    "media are read by this ffmpeg",
  );
  try {
    await deps.speech.check();
    deps.logger.info({ engine: deps.speech.name }, "speech is heard by this engine");
    return null;
  } catch (err) {
    if (!(err instanceof SpeechEngineError)) throw err;
    deps.logger.error(
      { engine: deps.speech.name },
      `speech to text is unavailable, ${consequence} will fail: ${err.message}`,
    );
    return err;
  }
}
