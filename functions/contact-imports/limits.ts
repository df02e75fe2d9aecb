/**
 * The contact imports' limits, in a module of their own (no import), so the route declarations
 * read them without bundling the schemas.
 *
 * The largest POST /v1/contacts/imports: 4.25 MiB of form (about 4 MB of CSV beside its few
 * fields). API Gateway hands a form to Lambda base64-encoded (a multipart body is binary to it),
 * which makes it 4/3 larger, inside a JSON event beside the headers and the request context, and
 * Lambda takes at most 6 MB (6,291,456 bytes) for a synchronous call: 4.25 MiB is 5.67 MiB of
 * base64, leaving about 300 KB for the rest of the event. Resend takes 50 MB; a larger file goes
 * through our upload (POST /v1/contacts/imports/uploads, a presigned S3 PUT).
 */
export const MAX_IMPORT_REQUEST_BYTES = 4.25 * 1024 * 1024;

/** The largest file imported through an upload: 500 MiB (about 5 million rows of a few columns). */
export const MAX_UPLOAD_BYTES = 500 * 1024 * 1024;

/** How long an upload's presigned URL lasts. */
export const UPLOAD_URL_SECONDS = 3600;
