/**
 * zod -> JSON Schema, the one conversion every published description uses (OpenAPI, MCP tool
 * schemas, x402's Bazaar extension, the catalog): a leaf module, importable from any layer.
 */
import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

/** zod -> JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1 and MCP 2025-11-25). */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  }) as JsonSchema;
  return portable(rest) as JsonSchema;
}

const annotations = new Set(['description', 'title', 'examples', 'default', 'deprecated']);

/**
 * `type: ["string", "null"]` -> `anyOf: [{type: "string", ...}, {type: "null"}]`: the same schema in
 * a form that single-`type` dialects (Gemini function declarations, some MCP clients) accept.
 */
function portable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(portable);
  if (typeof node !== 'object' || node === null) return node;
  const entries = Object.entries(node as JsonSchema).map(([k, v]) => [k, portable(v)] as const);
  const schema = Object.fromEntries(entries) as JsonSchema;
  if (!Array.isArray(schema.type)) return schema;
  const kept: JsonSchema = {};
  const constraints: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type') continue;
    (annotations.has(key) ? kept : constraints)[key] = value;
  }
  kept.anyOf = (schema.type as string[]).map((type) =>
    type === 'null' ? { type } : { type, ...constraints },
  );
  return kept;
}
