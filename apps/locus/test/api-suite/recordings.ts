import { schemaErrors } from "../openapi-validator.ts";
import { encodeAudio, recording, speak } from "@locus/testing";
import { type ApiSuite, type SearchBody, uploadReady } from "./shared.ts";

export function describeRecordings(s: ApiSuite): void {
  describe("recordings, transcribed offline", () => {
    it("finds the moment a phrase is spoken in an MP3", async () => {
      const speech = await speak("The ferry to the island leaves at noon.");
      const audio = await encodeAudio(recording([6, speech, 1]), "mp3");
      const f = await uploadReady(s.live, audio, "ferry.mp3");
      expect(f).toMatchObject({ status: "ready", file_type: "audio", page_count: null });
      expect(schemaErrors("FileRecord", f)).toBeNull();
      const body = (await (await s.live.get("/api/search?q=ferry%20island")).json()) as SearchBody;
      expect(schemaErrors("SearchResponse", body)).toBeNull();
      const hit = body.results.find((r) => r.file_id === f.id);
      expect(hit?.locator.source).toBe("speech");
      expect(Math.abs((hit?.locator.timestamp ?? 99) - 6)).toBeLessThan(2);
    }, 60_000);
  });
}
