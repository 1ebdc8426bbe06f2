import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import type { ExtractedPassage } from "@locus/contracts";
import { transcribeRecording } from "@locus/media-reader";
import { PocketsphinxSpeechToText } from "@locus/speech-to-text";
import {
  client,
  createUserWithKey,
  makeScannedPdf,
  makeTextDocument,
  makeTextImage,
  makeVideo,
  QUALITY_FIXTURES,
  recordResilience,
  recording,
  removeDataDir,
  speak,
  startLocus,
  waitForFile,
  type Client,
  type LocusProcess,
} from "@locus/testing";

/**
 * A busy machine loses nothing (#35). A mixed burst is uploaded at once to the all-in-one shape (a
 * scan that needs OCR, an office document that LibreOffice converts, two real human recordings and
 * a talk on video) while busy neighbours hold the cores: loops that each run in a session of their
 * own, as other tenants' processes do (with the kernel's autogroup scheduling, loops started in
 * this test's own session would share one slice of CPU with Locus and take almost nothing from
 * it). Every recording and the video must end `ready` with all their words: the passages Locus
 * made under load say exactly what the same engine hears in them on an idle machine.
 *
 * Before #35 the recogniser was killed by a wall-clock limit while it waited for a core, the
 * chunks were skipped, and the recordings ended `ready` with their speech missing, or `failed`.
 * A soak suite: alone, after the fault suites, so the neighbours slow no other suite, and only in
 * `pnpm test:resilience` (or `pnpm test:soak`): its four minutes do not fit every CI run.
 */
const NEIGHBOURS = 6;
const SPEECH_FIXTURES = ["asterisk-prompts-wide.ogg", "asterisk-prompts-tight.ogg"] as const;

let locus: LocusProcess;
let c: Client;
const neighbours: ChildProcess[] = [];

beforeAll(async () => {
  locus = await startLocus({ env: { LOCUS_RATE_LIMIT_PRO: "1000" } });
  c = client(locus.baseUrl, (await createUserWithKey(locus.dataDir, { plan: "pro" })).key);
}, 180_000);

afterAll(async () => {
  stopNeighbours();
  expect(await locus.stop()).toBe(0);
  removeDataDir(locus.dataDir);
});

/** Busy loops, each the leader of a session of its own (detached: setsid). */
function startNeighbours(count: number): void {
  for (let i = 0; i < count; i++) {
    const loop = spawn("sh", ["-c", "while :; do :; done"], { detached: true, stdio: "ignore" });
    loop.unref();
    neighbours.push(loop);
  }
}

function stopNeighbours(): void {
  for (const loop of neighbours.splice(0)) {
    try {
      if (loop.pid) process.kill(-loop.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

interface Passage {
  content: string;
  locator: { timestamp?: number; source?: string };
}

/** Every passage Locus stored for the file, in order. */
async function passagesOf(fileId: string): Promise<Passage[]> {
  const all: Passage[] = [];
  for (let offset: number | null = 0; offset !== null;) {
    const page = (await (await c.get(`/api/files/${fileId}/passages?offset=${offset}&limit=100`)).json()) as {
      passages: Passage[];
      next_offset: number | null;
    };
    all.push(...page.passages);
    offset = page.next_offset;
  }
  return all;
}

/** The words said, in order, without the overlap passages share. */
const spokenWords = (passages: { content: string; locator: { source?: string } }[]) =>
  passages
    .filter((p) => p.locator.source === "speech")
    .flatMap((p) => p.content.toLowerCase().split(/\s+/))
    .filter(Boolean);

/** What the same recogniser hears in `data` on an idle machine: the reference. */
async function heardAlone(data: Buffer, mimeType: string): Promise<string[]> {
  const passages: ExtractedPassage[] = [];
  const gen = transcribeRecording(
    data,
    mimeType,
    { speech: new PocketsphinxSpeechToText(), logger: { warn: () => undefined }, maxDurationS: 3600 },
    () => undefined,
  );
  for (let next = await gen.next(); !next.done; next = await gen.next()) passages.push(next.value);
  return spokenWords(passages.map((p) => ({ content: p.content, locator: p.locator })));
}

it("ends every recording and video ready with all its words while busy neighbours hold the cores", async () => {
  const talk = recording([
    1,
    await speak("The harbour committee approved the budget for the lighthouse restoration."),
    1,
    await speak("Work on the new lantern starts in the spring, after the storms."),
    1,
  ]);
  const slide = async (lines: string[]) =>
    (await makeTextImage({ lines, width: 960, height: 540, fontPx: 40 })).data;
  // `spoken`: a recording, or a video with speech, whose words are checked.
  const burst: { name: string; data: Buffer; spoken?: true }[] = [
    {
      name: "ledger-scan.pdf",
      data: await makeScannedPdf(
        Array.from({ length: 4 }, (_, page) => [
          `Harbour ledger, page ${page + 1}`,
          "Mooring fees collected from the visiting yachts",
          "Repairs to the eastern breakwater and the slipway",
        ]),
      ),
    },
    {
      name: "minutes.docx",
      data: await makeTextDocument("docx", [
        [
          "Minutes of the harbour committee",
          "The committee agreed to repaint the lighthouse before the summer season.",
        ],
      ]),
    },
    ...SPEECH_FIXTURES.map((name) => ({
      name,
      data: readFileSync(join(QUALITY_FIXTURES, name)),
      spoken: true as const,
    })),
    {
      name: "talk.mp4",
      data: await makeVideo({
        slides: [
          { image: await slide(["Harbour committee", "Lighthouse restoration"]), seconds: 7 },
          { image: await slide(["The new lantern", "Spring works"]), seconds: 7 },
        ],
        sound: talk,
        format: "mp4",
      }),
      spoken: true,
    },
  ];

  startNeighbours(NEIGHBOURS);
  const started = Date.now();
  let finished: { name: string; id: string; status: string; error?: unknown; mime_type?: string }[];
  try {
    const ids = await Promise.all(
      burst.map(async ({ data, name }) => {
        const res = await c.upload(data, name);
        expect(res.status).toBe(200);
        return ((await res.json()) as { file: { id: string } }).file.id;
      }),
    );
    // A hang detector, not a speed check: on 2 cores with six neighbours the burst takes a few minutes.
    finished = await Promise.all(
      ids.map(async (id, i) => ({
        name: burst[i]!.name,
        id,
        ...((await waitForFile(c, id, 600_000)) as { status: string; error?: unknown; mime_type?: string }),
      })),
    );
  } finally {
    stopNeighbours();
  }
  const allReadyS = Math.round((Date.now() - started) / 1000);
  expect(finished.map(({ name, status, error }) => ({ name, status, error }))).toEqual(
    burst.map(({ name }) => ({ name, status: "ready", error: null })),
  );

  // Every recording and the video say under load exactly what they say on an idle machine.
  const heard: Record<string, { words: number }> = {};
  for (const file of finished) {
    const source = burst.find((b) => b.name === file.name)!;
    if (!source.spoken) continue;
    const reference = await heardAlone(source.data, file.mime_type!);
    expect(reference.length).toBeGreaterThan(5);
    expect(spokenWords(await passagesOf(file.id))).toEqual(reference);
    heard[file.name] = { words: reference.length };
  }
  recordResilience("busy-machine-burst", {
    cores: availableParallelism(),
    neighbours: NEIGHBOURS,
    files: burst.length,
    all_ready_s: allReadyS,
    recordings_whole: heard,
  });
}, 900_000);
