import { existsSync } from "node:fs";
import AdmZip from "adm-zip";
import { FileRejectedError } from "@locus/contracts";
import { DEFAULT_INSPECTION_LIMITS, inspectOfficeDocument, type OfficeFormat } from "../src/index.ts";
import {
  compoundFileOfAnotherKind,
  declaringUnpackedSize,
  encryptedOoxml,
  nestedDocx,
  odtDeclaredEncrypted,
  odtWithLoadMacro,
  zipOf,
} from "@locus/testing";
import { buildOfficeFixtures, type OfficeFixtures } from "./office-fixtures.ts";

/** LibreOffice writes the fixtures; CI installs it (.ci/packages.sh). */
const HAS_LIBREOFFICE = existsSync("/usr/lib/libreoffice/program/soffice.bin");
const withLibreOffice = HAS_LIBREOFFICE ? describe : describe.skip;
const titled = (title: string) =>
  HAS_LIBREOFFICE
    ? title
    : `${title} (SKIPPED: LibreOffice is not installed; apt-get install libreoffice-core-nogui libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui)`;

function rejection(run: () => unknown): FileRejectedError {
  try {
    run();
  } catch (error) {
    if (error instanceof FileRejectedError) return error;
    throw error;
  }
  throw new Error("expected a FileRejectedError");
}

withLibreOffice(titled("inspectOfficeDocument on documents LibreOffice wrote"), () => {
  let fixtures: OfficeFixtures;
  beforeAll(() => {
    fixtures = buildOfficeFixtures();
  });

  const expected: [OfficeFormat, string, string][] = [
    ["docx", "text", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"],
    ["doc", "text", "application/msword"],
    ["odt", "text", "application/vnd.oasis.opendocument.text"],
    ["rtf", "text", "application/rtf"],
    ["pptx", "presentation", "application/vnd.openxmlformats-officedocument.presentationml.presentation"],
    ["ppt", "presentation", "application/vnd.ms-powerpoint"],
    ["odp", "presentation", "application/vnd.oasis.opendocument.presentation"],
    ["xlsx", "spreadsheet", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"],
    ["xls", "spreadsheet", "application/vnd.ms-excel"],
    ["ods", "spreadsheet", "application/vnd.oasis.opendocument.spreadsheet"],
  ];
  test.each(expected)("tells a %s from its container, whatever it is called", (format, family, mimeType) => {
    // The hint is wrong on purpose: the container decides.
    expect(inspectOfficeDocument(fixtures.documents[format], "application/octet-stream")).toEqual({
      format,
      family,
      mimeType,
      hasMacros: false,
    });
  });

  test.each(["doc", "odt", "xls"] as const)(
    "rejects a password-protected %s as document_encrypted",
    (format) => {
      const error = rejection(() => inspectOfficeDocument(fixtures.encrypted[format]));
      expect(error.code).toBe("document_encrypted");
      expect(error.message).toMatch(/password/);
    },
  );

  test("rejects a DOCX whose central directory declares a huge unpacked size (a zip bomb) as document_too_large", () => {
    const bomb = declaringUnpackedSize(fixtures.documents.docx, "word/document.xml", 0xfffffff0);
    const error = rejection(() => inspectOfficeDocument(bomb));
    expect(error.code).toBe("document_too_large");
    // The same file with its real sizes passes: the declaration alone decides.
    expect(inspectOfficeDocument(fixtures.documents.docx).format).toBe("docx");
  });

  test("rejects an archive unpacking far beyond its size (the ratio), and one with too many parts", () => {
    const ratio = declaringUnpackedSize(fixtures.documents.docx, "word/document.xml", 64 * 1024 * 1024);
    expect(rejection(() => inspectOfficeDocument(ratio)).code).toBe("document_too_large");
    const limits = { ...DEFAULT_INSPECTION_LIMITS, maxEntries: 5 };
    expect(rejection(() => inspectOfficeDocument(fixtures.documents.docx, undefined, limits)).code).toBe(
      "document_too_large",
    );
  });

  test("counts packages embedded in packages: nested deeper than maxNesting is document_too_large", () => {
    const limits = { ...DEFAULT_INSPECTION_LIMITS, maxNesting: 3 };
    expect(inspectOfficeDocument(nestedDocx(fixtures.documents.docx, 3), undefined, limits).format).toBe(
      "docx",
    );
    const error = rejection(() =>
      inspectOfficeDocument(nestedDocx(fixtures.documents.docx, 4), undefined, limits),
    );
    expect(error.code).toBe("document_too_large");
    expect(error.message).toMatch(/nested 4 deep/);
  });

  test("an embedded package's declared size counts towards the whole document's", () => {
    const inner = declaringUnpackedSize(fixtures.documents.xlsx, "xl/workbook.xml", 900 * 1024 * 1024);
    const outer = new AdmZip(fixtures.documents.docx);
    outer.addFile("word/embeddings/Microsoft_Excel_Worksheet.xlsx", inner);
    const limits = { ...DEFAULT_INSPECTION_LIMITS, maxUnpackedBytes: 512 * 1024 * 1024 };
    expect(rejection(() => inspectOfficeDocument(outer.toBuffer(), undefined, limits)).code).toBe(
      "document_too_large",
    );
  });
});

describe("inspectOfficeDocument on hostile and foreign files", () => {
  test("an OOXML file in a compound file with EncryptedPackage is document_encrypted", () => {
    expect(rejection(() => inspectOfficeDocument(encryptedOoxml())).code).toBe("document_encrypted");
  });

  test("an ODF whose manifest has encryption-data is document_encrypted", () => {
    expect(rejection(() => inspectOfficeDocument(odtDeclaredEncrypted())).code).toBe("document_encrypted");
  });

  test("an ODF with a Basic library says hasMacros", () => {
    expect(inspectOfficeDocument(odtWithLoadMacro("/nonexistent/marker", "A macro document."))).toMatchObject(
      {
        format: "odt",
        hasMacros: true,
      },
    );
  });

  test("a macro-enabled OOXML document (docm) is a docx with hasMacros", () => {
    const docm = zipOf([
      {
        name: "[Content_Types].xml",
        data: '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.ms-word.document.macroEnabled.main+xml"/><Override PartName="/word/vbaProject.bin" ContentType="application/vnd.ms-office.vbaProject"/></Types>',
      },
      { name: "word/document.xml", data: "<w:document/>" },
      { name: "word/vbaProject.bin", data: Buffer.alloc(64) },
    ]);
    expect(inspectOfficeDocument(docm)).toEqual({
      format: "docx",
      family: "text",
      mimeType: "application/vnd.ms-word.document.macroEnabled.12",
      hasMacros: true,
    });
  });

  test("a plain zip, a compound file of another kind (an MSI's shape) and random bytes are document_corrupt", () => {
    const plainZip = zipOf([{ name: "notes.txt", data: "just a zip" }]);
    expect(rejection(() => inspectOfficeDocument(plainZip)).code).toBe("document_corrupt");
    expect(rejection(() => inspectOfficeDocument(compoundFileOfAnotherKind())).code).toBe("document_corrupt");
    const error = rejection(() =>
      inspectOfficeDocument(Buffer.from("%PDF-1.7 not an office file"), "application/msword"),
    );
    expect(error.code).toBe("document_corrupt");
    expect(error.message).toMatch(/application\/msword/);
    expect(rejection(() => inspectOfficeDocument(Buffer.from("PK\u0003\u0004 cut short"))).code).toBe(
      "document_corrupt",
    );
  });

  test("a part that unpacks to more than it declares is never inflated past its declaration", () => {
    const lying = zipOf([
      { name: "mimetype", data: "application/vnd.oasis.opendocument.text" },
      { name: "META-INF/manifest.xml", data: "x".repeat(100_000) },
    ]);
    const patched = declaringUnpackedSize(lying, "META-INF/manifest.xml", 100);
    expect(rejection(() => inspectOfficeDocument(patched)).code).toBe("document_too_large");
  });
});
