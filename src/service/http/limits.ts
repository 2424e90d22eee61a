/** Largest JSON body accepted (a 50-entry intelligence batch fits many times over); over it is a 400. */
export const JSON_BODY_LIMIT = 1_048_576;
