import { framePrint, printDistance, ScreenText } from "../src/index.ts";

const line = (text: string, y: number, confidence = 0.9) => ({
  text,
  confidence,
  bbox: { x: 100, y, width: 300, height: 30 },
});

describe("ScreenText", () => {
  it("makes one passage of the lines a slide shows, for the interval it is shown", () => {
    const screen = new ScreenText();
    screen.see(0, [line("Quarterly results", 100), line("Revenue grew in the north", 150)]);
    screen.see(2, [line("quarterly  results!", 100), line("Revenue grew in the north", 150)]); // read a little differently
    screen.see(4.2, [line("Next steps", 100)]);
    expect(screen.finish(8.5)).toEqual([
      {
        content: "Quarterly results\nRevenue grew in the north",
        locator: {
          timestamp: 0,
          timestamp_end: 4.2,
          bbox: { x: 100, y: 100, width: 300, height: 80 },
          source: "screen",
          confidence: 0.9,
        },
      },
      {
        content: "Next steps",
        locator: {
          timestamp: 4.2,
          timestamp_end: 8.5,
          bbox: { x: 100, y: 100, width: 300, height: 30 },
          source: "screen",
          confidence: 0.9,
        },
      },
    ]);
  });

  it("gives a caption that stays while slides change its own interval", () => {
    const screen = new ScreenText();
    screen.see(0, [line("Slide one", 100), line("Company confidential", 500)]);
    screen.see(5, [line("Slide two", 100), line("Company confidential", 500)]);
    const passages = screen.finish(10);
    expect(passages.map((p) => [p.content, p.locator.timestamp, p.locator.timestamp_end])).toEqual([
      ["Slide one", 0, 5],
      ["Company confidential", 0, 10],
      ["Slide two", 5, 10],
    ]);
  });

  it("finds nothing on frames without text", () => {
    const screen = new ScreenText();
    screen.see(0, []);
    screen.see(5, []);
    expect(screen.finish(10)).toEqual([]);
  });
});

describe("framePrint", () => {
  const frame = (fill: (x: number, y: number) => number, w = 320, h = 180) => {
    const header = Buffer.from(`P5\n${w} ${h}\n255\n`, "latin1");
    const pixels = Buffer.alloc(w * h);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) pixels[y * w + x] = fill(x, y);
    return Buffer.concat([header, pixels]);
  };

  it("tells the same picture with noise from a picture with a line of text changed", () => {
    const white = frame(() => 255);
    const noisy = frame((x, y) => 255 - ((x * 7 + y * 13) % 5));
    const withText = frame((x, y) => (y > 80 && y < 95 && x > 40 && x < 120 ? 0 : 255));
    const print = (f: Buffer) => framePrint(f, 320, 180);
    expect(printDistance(print(white), print(noisy))).toBeLessThan(4);
    expect(printDistance(print(white), print(withText))).toBeGreaterThan(20);
  });
});
