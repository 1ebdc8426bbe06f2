import { inlineContentDisposition } from "../src/content-disposition.ts";

describe("inlineContentDisposition", () => {
  it("quotes a plain ASCII name as it is", () => {
    expect(inlineContentDisposition("report-2024 (final).pdf")).toBe(
      'inline; filename="report-2024 (final).pdf"',
    );
  });

  it("adds filename* in UTF-8 for other names, with an ASCII fallback", () => {
    expect(inlineContentDisposition("Überblick.pdf")).toBe(
      "inline; filename=\"_berblick.pdf\"; filename*=UTF-8''%C3%9Cberblick.pdf",
    );
    expect(inlineContentDisposition("会议记录.mp3")).toBe(
      "inline; filename=\"____.mp3\"; filename*=UTF-8''%E4%BC%9A%E8%AE%AE%E8%AE%B0%E5%BD%95.mp3",
    );
  });

  it("cannot be used to inject a header or break out of the quotes", () => {
    const value = inlineContentDisposition('a"; filename="evil.html\r\nSet-Cookie: x=1');
    expect(value).not.toMatch(/[\r\n]/);
    expect(value.startsWith('inline; filename="a_; filename=_evil.html__Set-Cookie: x=1"; filename*=')).toBe(
      true,
    );
    expect(inlineContentDisposition("100%.txt")).toBe(
      "inline; filename=\"100_.txt\"; filename*=UTF-8''100%25.txt",
    );
  });

  it("keeps only the last path segment, and is bare inline without a name", () => {
    expect(inlineContentDisposition("C:\\Users\\me\\scan.png")).toBe('inline; filename="scan.png"');
    expect(inlineContentDisposition("../../etc/passwd")).toBe('inline; filename="passwd"');
    expect(inlineContentDisposition("")).toBe("inline");
    expect(inlineContentDisposition(undefined)).toBe("inline");
    expect(inlineContentDisposition("dir/")).toBe("inline");
  });
});
