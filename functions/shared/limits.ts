/**
 * The sends' limits, in a module of their own (no import), so that the HTTP layer and the route
 * declarations read them without bundling the email schema into every function.
 *
 * The largest email of a batch, as JSON, and the default limit of a request body: an email this
 * size keeps its bodies in one DynamoDB item (400 KB).
 */
export const MAX_EMAIL_BYTES = 256 * 1024;

/**
 * The largest request to POST /v1/emails, which alone takes attachments: 5 MiB. Lambda takes 6 MB
 * (6,291,456 bytes) per synchronous invocation, and API Gateway hands it the request inside a JSON
 * event, the body as a string (quotes and backslashes in it escaped) beside the headers and the
 * request context; 1 MiB of room keeps every ordinary request (base64 needs no escaping) under
 * that limit. Larger files go by `path` (fetched when the email is sent, up to SES's 40 MB).
 */
export const MAX_SEND_REQUEST_BYTES = 5 * 1024 * 1024;

/** How far ahead an email may be scheduled (`scheduled_at`), as Resend allows. */
export const MAX_SCHEDULE_DAYS = 30;

/** `POST /v1/emails/batch`: 1 to 100 emails, as Resend takes them. */
export const MAX_BATCH = 100;

/**
 * A batch's body: at most 5 MiB (Lambda takes 6 MB for a synchronous call's event, body and all),
 * and each email in it at most what a single send may be.
 */
export const MAX_BATCH_BODY_BYTES = 5 * 1024 * 1024;
