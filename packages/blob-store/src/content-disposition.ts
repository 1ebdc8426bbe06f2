/**
 * An inline Content-Disposition header value naming the file, encoded per RFC 6266: a plain
 * quoted `filename` when the name is printable ASCII, otherwise an ASCII fallback for old clients
 * plus `filename*` in UTF-8 (RFC 8187), which every current browser prefers.
 */
export function inlineContentDisposition(fileName?: string): string {
  if (fileName === undefined || fileName === "") return "inline";
  // A name arrives from an upload form; only its last path segment means anything to a browser.
  const name = fileName.split(/[/\\]/).pop() ?? "";
  if (name === "") return "inline";
  if (/^[\x20-\x7e]*$/.test(name) && !/["\\%]/.test(name)) {
    return `inline; filename="${name}"`;
  }
  // Quotes, backslashes and percent signs are replaced in the fallback rather than escaped: some
  // clients decode `%xx` or mishandle quoted-pair, and the exact name is in filename* anyway.
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  return `inline; filename="${fallback}"; filename*=UTF-8''${encodeRfc8187(name)}`;
}

/** Percent-encodes everything outside RFC 8187's attr-char set. */
function encodeRfc8187(value: string): string {
  // encodeURIComponent leaves ' ( ) * unescaped, which attr-char does not allow.
  return encodeURIComponent(value).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}
