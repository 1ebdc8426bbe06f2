import { NOTICES_CHECKED_EVERY_MS, serverNotices } from "../src/server-notices.ts";

describe("serverNotices", () => {
  it("says nothing when every engine answers, and has no checks to make for engines it was not given", async () => {
    expect(await serverNotices({})()).toEqual([]);
    const notices = serverNotices({
      speech: () => Promise.resolve(),
      officeConversion: () => Promise.resolve({ ok: true }),
      sentenceEncoder: () => Promise.resolve({ model: "e5", unavailable: undefined }),
    });
    expect(await notices()).toEqual([]);
  });

  it("says, a sentence each, what this server cannot do, with each engine's reason", async () => {
    const notices = serverNotices({
      speech: () => Promise.reject(new Error("install pocketsphinx-en-us")),
      officeConversion: () => Promise.resolve({ ok: false, reason: "install libreoffice-writer" }),
      sentenceEncoder: () =>
        Promise.resolve({ model: "e5-small", unavailable: "its model files are missing" }),
    });
    expect(await notices()).toEqual([
      "Recordings cannot be transcribed on this server, so audio and video files fail: install pocketsphinx-en-us",
      "Office documents cannot be converted on this server, so they fail: install libreoffice-writer",
      expect.stringMatching(
        /^ai search is degraded: the sentence encoder e5-small cannot run because its model files are missing/,
      ),
    ]);
  });

  it("asks the engines at most once a minute, and again after", async () => {
    let clock = 0;
    let asked = 0;
    let installed = false;
    const notices = serverNotices(
      {
        speech: () => {
          asked += 1;
          return installed ? Promise.resolve() : Promise.reject(new Error("not installed"));
        },
      },
      () => clock,
    );
    expect(await notices()).toHaveLength(1);
    installed = true;
    clock += NOTICES_CHECKED_EVERY_MS;
    expect(await notices()).toHaveLength(1);
    expect(asked).toBe(1);
    clock += 1;
    expect(await notices()).toEqual([]);
    expect(asked).toBe(2);
  });
});
