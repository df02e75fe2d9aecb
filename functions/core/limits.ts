/**
 * The largest email, as JSON (a request to POST /v1/emails, or one email of a batch): its bodies
 * must fit one DynamoDB item (400 KB) and its job one queue message. A module of its own, so the
 * HTTP layer reads it without bundling the email schema into every function.
 */
export const MAX_EMAIL_BYTES = 256 * 1024;
