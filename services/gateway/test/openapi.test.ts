import {
  API_SCHEMAS,
  FileRecordDto,
  FileStatus,
  FileType,
  SearchMode,
  type ApiSchemaName,
} from "@locus/contracts";
import { openApiDocument } from "../src/openapi.ts";

/** /openapi.json is generated from the zod schemas: these hold it to them, field by field. */

interface ObjectJsonSchema {
  type?: string;
  properties?: Record<string, unknown>;
  required?: string[];
  enum?: unknown[];
}

const components = openApiDocument.components.schemas as Record<string, ObjectJsonSchema>;
const componentOf = (name: ApiSchemaName): ObjectJsonSchema => {
  const schema = components[name];
  if (!schema) throw new Error(`/openapi.json has no schema ${name}`);
  return schema;
};

/** Every `$ref` anywhere in a JSON value. */
function refsIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsIn);
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    key === "$ref" && typeof inner === "string" ? [inner] : refsIn(inner),
  );
}

describe("/openapi.json's schemas come from @locus/contracts", () => {
  it("lists every field of the file record, and requires the ones the record always has", () => {
    const record = componentOf("FileRecord");
    const fields = Object.keys(FileRecordDto.shape);
    expect(Object.keys(record.properties ?? {}).sort()).toEqual([...fields].sort());
    const always = fields.filter(
      (field) => !FileRecordDto.shape[field as keyof typeof FileRecordDto.shape].safeParse(undefined).success,
    );
    expect([...(record.required ?? [])].sort()).toEqual(always.sort());
  });

  it.each(Object.keys(API_SCHEMAS) as ApiSchemaName[])("%s has every field of its zod schema", (name) => {
    const zodSchema: unknown = API_SCHEMAS[name];
    const shape = (zodSchema as { shape?: Record<string, unknown> }).shape;
    // Enums and lists have no fields of their own; their items are checked under their own names.
    if (shape === undefined) return;
    expect(Object.keys(componentOf(name).properties ?? {}).sort()).toEqual(Object.keys(shape).sort());
  });

  it("states the enums the code checks with", () => {
    expect(componentOf("FileType").enum).toEqual(FileType.options);
    expect(componentOf("FileStatus").enum).toEqual(FileStatus.options);
    expect(componentOf("SearchMode").enum).toEqual(SearchMode.options);
    const search = openApiDocument.paths["/api/search"]?.get?.parameters?.find((p) => p.name === "mode");
    expect(search).toMatchObject({ schema: { enum: SearchMode.options, default: "quick" } });
  });

  it("refers only to schemas it has", () => {
    const missing = refsIn(openApiDocument).filter(
      (ref) => !(ref.startsWith("#/components/schemas/") && ref.slice(21) in components),
    );
    expect(missing).toEqual([]);
  });

  it("is one document: no schema carries a dialect or an id of its own", () => {
    for (const schema of Object.values(components)) {
      expect(schema).not.toHaveProperty("$schema");
      expect(schema).not.toHaveProperty("$id");
    }
  });
});
