import type { z } from 'zod';
import type { ConfigPath } from './errors.js';

type AnySchema = z.core.$ZodType;
type Def = Record<string, unknown> & { type: string };

/** The zod definition of a schema (its `type` names the kind: object, default, array...). */
export function defOf(schema: AnySchema): Def {
  return schema._zod.def as unknown as Def;
}

/** A field's schema with default/prefault/optional/nullable/pipe wrappers removed. */
export function unwrap(schema: AnySchema): AnySchema {
  let current = schema;
  for (;;) {
    const def = defOf(current);
    if (['default', 'prefault', 'optional', 'nullable', 'readonly'].includes(def.type)) current = def.innerType as AnySchema;
    else if (def.type === 'pipe') current = def.in as AnySchema;
    else return current;
  }
}

/** The fields of an object schema (unwrapped), or undefined when it is not an object. */
export function shapeOf(schema: AnySchema): Record<string, AnySchema> | undefined {
  const def = defOf(unwrap(schema));
  return def.type === 'object' ? (def.shape as Record<string, AnySchema>) : undefined;
}

/** The schema that validates the value at `path`, walking objects and arrays. */
export function schemaAt(schema: AnySchema, path: ConfigPath): AnySchema | undefined {
  let current: AnySchema | undefined = schema;
  for (const seg of path) {
    if (current === undefined) return undefined;
    const def = defOf(unwrap(current));
    if (def.type === 'object' && typeof seg === 'string') current = (def.shape as Record<string, AnySchema>)[seg];
    else if (def.type === 'array' && typeof seg === 'number') current = def.element as AnySchema;
    else return undefined;
  }
  return current;
}
