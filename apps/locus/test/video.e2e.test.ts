import {
  client,
  createUserWithKey,
  makeTextImage,
  makeVideo,
  recording,
  removeDataDir,
  speak,
  startLocus,
  uploadAndWait,
  type Client,
  type FileRecordBody,
  type LocusProcess,
  type VideoFormat,
} from "@locus/testing";

/**
 * Videos through the running server, assembled with ffmpeg from text slides and flite speech: what
 * is shown comes back with the interval it is on screen (`source: "screen"`), what is said with the
 * second it is said (`source: "speech"`); a video without sound gives what is shown; a damaged one
 * fails with a reason.
 */
let locus: LocusProcess;
let c: Client;
beforeAll(async () => {
  locus = await startLocus({ env: { LOCUS_RATE_LIMIT_PRO: "1000" } });
  const { key } = await createUserWithKey(locus.dataDir, { plan: "pro" });
  c = client(locus.baseUrl, key);
}, 180_000);
afterAll(async () => {
  expect(await locus.stop()).toBe(0);
  removeDataDir(locus.dataDir);
});

interface Hit {
  file_id: string;
  content: string;
  locator: { timestamp: number; timestamp_end: number; source: string; bbox?: { x: number; y: number } };
}

const uploadReady = (data: Buffer, name: string) => uploadAndWait(c, data, name, 90_000);
const search = async (q: string, fileId: string) =>
  (
    (await (await c.get(`/api/search?q=${encodeURIComponent(q)}`)).json()) as { results: Hit[] }
  ).results.filter((r) => r.file_id === fileId);

const slide = async (lines: string[]) =>
  (await makeTextImage({ lines, width: 960, height: 540, fontPx: 40 })).data;

describe.each(["mp4", "webm"] as VideoFormat[])("a talk with slides (%s)", (format) => {
  let file: FileRecordBody;
  beforeAll(async () => {
    // Slide one for 6 s, slide two for 6 s; a sentence spoken at about 7 s, over slide two.
    const sound = recording([7, await speak("Our budget for the lighthouse restoration is approved."), 5]);
    const video = await makeVideo({
      slides: [
        { image: await slide(["Harbour committee", "Annual review of the marina"]), seconds: 6 },
        { image: await slide(["Restoration plans", "New lantern for the tower"]), seconds: 6 },
      ],
      sound,
      format,
    });
    file = await uploadReady(video, `talk.${format}`);
  }, 180_000);

  it("ends ready, a video with its length", () => {
    expect(file).toMatchObject({ status: "ready", file_type: "video", error: null });
    expect(file.duration_s).toBeGreaterThan(11);
    expect(file.duration_s).toBeLessThan(13.5);
  });

  it("finds text on screen with the interval it is shown", async () => {
    const [first] = await search("marina", file.id);
    expect(first?.locator.source).toBe("screen");
    expect(first?.locator.timestamp).toBeLessThan(1);
    expect(Math.abs((first?.locator.timestamp_end ?? 0) - 6)).toBeLessThan(1.5);
    expect(first?.locator.bbox).toBeDefined();
    const [second] = await search("lantern tower", file.id);
    expect(Math.abs((second?.locator.timestamp ?? 0) - 6)).toBeLessThan(1.5);
    expect(Math.abs((second?.locator.timestamp_end ?? 0) - 12)).toBeLessThan(1.5);
  });

  it("finds what is said with the second it is said", async () => {
    const hits = await search("budget restoration approved", file.id);
    const spoken = hits.find((h) => h.locator.source === "speech");
    expect(Math.abs((spoken?.locator.timestamp ?? 0) - 7)).toBeLessThan(2);
  });
});

describe("other videos", () => {
  it.each(["mov", "mkv"] as VideoFormat[])(
    "reads %s",
    async (format) => {
      const video = await makeVideo({
        slides: [{ image: await slide(["Safety briefing", "Wear a helmet on site"]), seconds: 4 }],
        format,
      });
      const f = await uploadReady(video, `briefing.${format}`);
      expect(f).toMatchObject({ status: "ready", file_type: "video" });
      expect((await search("helmet", f.id))[0]?.locator.source).toBe("screen");
    },
    60_000,
  );

  it("reads a video without sound for what it shows", async () => {
    const video = await makeVideo({
      slides: [{ image: await slide(["Silent film", "Intertitles tell the story"]), seconds: 5 }],
      format: "mp4",
    });
    const f = await uploadReady(video, "silent.mp4");
    expect(f).toMatchObject({ status: "ready", file_type: "video" });
    expect((await search("intertitles", f.id)).length).toBeGreaterThan(0);
  }, 60_000);

  it("fails a damaged video with a reason", async () => {
    const video = await makeVideo({
      slides: [{ image: await slide(["Cut short"]), seconds: 4 }],
      format: "mp4",
    });
    // An MP4 written by ffmpeg keeps its index at the end: cut, it cannot be decoded.
    const f = await uploadReady(video.subarray(0, Math.floor(video.length / 2)), "cut.mp4");
    expect(f).toMatchObject({ status: "failed", error: { code: "media_corrupt" } });
  }, 60_000);
});
