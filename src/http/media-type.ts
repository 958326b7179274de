/**
 * Bodies must say they are JSON. A web page can send `text/plain`, form or
 * multipart bodies cross-site without a preflight; requiring a JSON media type
 * keeps every route with a body out of reach of such simple requests.
 */

/** JSON (`application/json` or any `application/*+json`), and NDJSON where the route reads it. */
export function isJsonBody(contentType: string, ndjson: boolean): boolean {
  if (contentType === 'application/json' || (ndjson && contentType === 'application/x-ndjson')) return true; // no parsing
  const semi = contentType.indexOf(';');
  const media = (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  return (
    media === 'application/json' ||
    (media.startsWith('application/') && media.endsWith('+json')) ||
    (ndjson && media === 'application/x-ndjson')
  );
}
