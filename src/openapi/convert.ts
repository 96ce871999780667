import {
  type ConversionConfig,
  type JsonSchema,
  toJsonSchema,
  toJsonSchemaDefs,
} from "@valibot/to-json-schema";
import type * as v from "valibot";

type Schema = v.GenericSchema;

/**
 * Turns the routes' valibot schemas into JSON Schema 2020-12 (what OpenAPI 3.1 uses).
 *
 * - Input types: a pipe is read up to its first transform, so `money()` documents the
 *   JSON number a client sends, not the minor units it becomes.
 * - `check` actions cannot be read; the shared schemas put the keywords they enforce
 *   beside them with `v.metadata` (src/http/schemas.ts), so a check is skipped quietly.
 * - Anything else that cannot be converted is collected in `problems` (a test keeps
 *   that list empty) instead of breaking the document.
 * - Answer schemas are closed (`additionalProperties: false`): an answer carrying a
 *   field the document does not name fails `expectDocumented`.
 * - `documentedAs(schema)` in a pipe (src/http/schemas.ts) replaces what the pipe says so
 *   far: a query `limit` is parsed from its text but documented as the integer it is.
 * - A literal carries its `type` beside `const` (generators type a bare `const: true` as a string).
 */
export class SchemaConverter {
  private readonly found = new Set<string>();
  private readonly names = new Map<Schema, string>();
  private location = "";

  /** What could not be converted, each with where it was found. */
  get problems(): string[] {
    return [...this.found];
  }

  /** Gives a schema a name: it goes to `components.schemas` and is referenced from everywhere. */
  name(schema: Schema, name: string): void {
    if (!this.names.has(schema) && ![...this.names.values()].includes(name))
      this.names.set(schema, name);
  }

  /** The named schemas, converted as answer shapes. */
  components(): Record<string, JsonSchema> {
    this.location = "components.schemas";
    const definitions = Object.fromEntries([...this.names].map(([schema, name]) => [name, schema]));
    return toJsonSchemaDefs(definitions, this.config(true));
  }

  /** One schema; `answer` closes its objects. `where` names it in problem reports. */
  convert(schema: Schema, where: string, answer = false): JsonSchema {
    this.location = where;
    return this.convertNested(schema, answer);
  }

  private convertNested(schema: Schema, answer: boolean): JsonSchema {
    const definitions = Object.fromEntries([...this.names].map(([named, name]) => [name, named]));
    const {
      $schema: _schema,
      $defs: _defs,
      ...json
    } = toJsonSchema(schema, { ...this.config(answer), definitions });
    return json;
  }

  private config(answer: boolean): ConversionConfig {
    return {
      target: "draft-2020-12",
      typeMode: "input",
      errorMode: "ignore",
      overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
      overrideAction: ({ valibotAction, jsonSchema, errors }) => {
        if (valibotAction.type === "check") return jsonSchema;
        const documented = documentedSchema(valibotAction);
        if (documented) return this.convertNested(documented, answer);
        if (errors) this.found.add(`${this.location}: ${errors.join(" ")}`);
        return errors ? jsonSchema : null;
      },
      overrideSchema: ({ valibotSchema, jsonSchema, errors }) => {
        if (errors) this.found.add(`${this.location}: ${errors.join(" ")}`);
        if (answer && valibotSchema.type === "object")
          return { ...jsonSchema, additionalProperties: false };
        if (valibotSchema.type === "literal")
          return { type: jsonType(jsonSchema.const), ...jsonSchema };
        if (valibotSchema.type === "optional") return withTypedDefault(jsonSchema);
        return errors ? jsonSchema : null;
      },
    };
  }
}

/** The schema a `documentedAs` metadata action names, if `action` is one. */
function documentedSchema(action: { type: string }): Schema | undefined {
  if (action.type !== "metadata") return undefined;
  return (action as { metadata?: { documentedAs?: Schema } }).metadata?.documentedAs;
}

/** The JSON type of a literal's value (a literal is a string, number, boolean or null). */
function jsonType(value: unknown): "null" | "integer" | "number" | "boolean" | "string" {
  if (value === null) return "null";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value === "boolean" ? "boolean" : "string";
}

/** A query parameter's default is text (`"50"`) where the document declares a number or boolean. */
function withTypedDefault(schema: JsonSchema): JsonSchema | null {
  if (
    typeof schema.default !== "string" ||
    !["integer", "number", "boolean"].includes(String(schema.type))
  )
    return null;
  return { ...schema, default: JSON.parse(schema.default) };
}
