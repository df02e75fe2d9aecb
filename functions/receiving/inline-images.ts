/**
 * `html_format=data_uri` (the default of `GET /v1/emails/receiving/{id}`, as Resend's SDK documents
 * it): an inline image's `cid:` reference in the html becomes a `data:<type>;base64,…` URI of the
 * attachment whose Content-ID it names, so the html shows its images on its own. Pure: the use case
 * reads the bytes and hands them in.
 */

/** A `cid:` URL where a URL is expected: an attribute's value (`src=`, `background=`) or CSS's `url(…)`. */
const CID_URL = /(=\s*["']?|url\(\s*["']?)cid:([^"'\s>)]+)/gi;

/** A Content-ID as both sides are compared: without `<…>`, the URL's %-escapes undone (RFC 2392), lower-cased. */
export function normalizeContentId(value: string): string {
  let id = value.trim();
  try {
    id = decodeURIComponent(id);
  } catch {
    // Not valid %-encoding: compared as written.
  }
  return id.replace(/^<|>$/g, '').toLowerCase();
}

/** The Content-IDs the html refers to with `cid:` URLs, each once, in the order they first appear. */
export function cidReferences(html: string): string[] {
  const seen = new Set<string>();
  for (const match of html.matchAll(CID_URL)) seen.add(normalizeContentId(match[2] ?? ''));
  return [...seen];
}

/** An image type fit for a `data:` URI in an `<img>` (the part before any parameter). */
export function imageType(contentType: string): string | undefined {
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return /^image\/[a-z0-9.+-]+$/.test(type) ? type : undefined;
}

/** The html with each `cid:` URL whose Content-ID is in `images` replaced by that image's `data:` URI. */
export function withDataUris(html: string, images: ReadonlyMap<string, { type: string; bytes: Uint8Array }>) {
  if (images.size === 0) return html;
  const uris = new Map([...images].map(([cid, image]) => [cid, dataUri(image.type, image.bytes)]));
  return html.replace(CID_URL, (whole, before: string, cid: string) => {
    const uri = uris.get(normalizeContentId(cid));
    return uri ? `${before}${uri}` : whole;
  });
}

const dataUri = (type: string, bytes: Uint8Array) =>
  `data:${type};base64,${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}`;

/** The characters an image of `bytes` takes as a data URI of this type (base64: 4 for every 3). */
export const dataUriChars = (type: string, bytes: number) =>
  `data:${type};base64,`.length + Math.ceil(bytes / 3) * 4;
