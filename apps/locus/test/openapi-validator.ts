import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { openApiDocument } from "@locus/gateway";

// ajv-formats is CommonJS: under ESM its plugin function is the `default` property of the import.
const addFormats = addFormatsModule.default;

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
// The whole document is one schema resource, so "#/components/schemas/X" refs resolve inside it.
ajv.addSchema(JSON.parse(JSON.stringify(openApiDocument)) as object, "openapi");

/** Checks a real response body against a schema of /openapi.json; returns ajv's errors, or null. */
export function schemaErrors(schemaName: string, body: unknown): string | null {
  const validate = ajv.getSchema(`openapi#/components/schemas/${schemaName}`);
  if (!validate) throw new Error(`No schema ${schemaName}`);
  return validate(body) ? null : ajv.errorsText(validate.errors);
}

/** Checks each item of a list; an empty list is an error: it would pass any item schema. */
export function arraySchemaErrors(schemaName: string, body: unknown): string | null {
  if (!Array.isArray(body)) return "not an array";
  if (body.length === 0) return "an empty array: nothing to check against the schema";
  for (const item of body) {
    const errors = schemaErrors(schemaName, item);
    if (errors) return errors;
  }
  return null;
}
