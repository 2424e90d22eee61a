// The part of zod the routes' body schemas use, imported dynamically by request.ts (loadZod): the
// service starts without evaluating zod, and the bundle keeps only these exports and what they need.
export { array, coerce, enum, number, object, record, strictObject, string, union, unknown } from 'zod';
