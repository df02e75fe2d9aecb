import { page, T0, T1 } from '../shared/examples.js';
import type { DocsOf } from '../shared/route.js';
import type { RECEIVING_ROUTES } from './routes.js';

/** The receiving routes in the OpenAPI document: their words and examples (routes.ts declares them). */

const RECEIVED_ID = '019ab2c4-7d1e-7a3f-9c2b-5e8d0f1a2b3c';
const IMAGE_ID = '019ab2c4-7d2a-7b10-8e4f-2a6c9d0e1f23';
const FILE_ID = '019ab2c4-7d2a-7b11-a1c3-7f5e2d9b0c46';
const LINK = 'https://content-bucket.s3.us-east-1.amazonaws.com/received/…?X-Amz-Expires=3600&…';

const image = {
  id: IMAGE_ID,
  filename: 'logo.png',
  content_type: 'image/png',
  content_id: 'logo@acme.com',
  content_disposition: 'inline',
  size: 4312,
} as const;
const file = {
  id: FILE_ID,
  filename: 'invoice.pdf',
  content_type: 'application/pdf',
  content_disposition: 'attachment',
  size: 48213,
} as const;

const listed = {
  id: RECEIVED_ID,
  created_at: T0,
  from: 'Customer <customer@example.com>',
  to: ['support@acme.com'],
  cc: [],
  bcc: [],
  reply_to: [],
  received_for: ['support@acme.com'],
  subject: 'Re: Your invoice',
  message_id: '<CAF=x7q@mail.example.com>',
  in_reply_to: '<0100019ab2c1@email.amazonses.com>',
  references: ['<0100019ab2c1@email.amazonses.com>'],
  attachments: [image, file],
  authentication: { spf: 'pass', dkim: 'pass', dmarc: 'pass' },
  spam: 'pass',
  virus: 'pass',
};

const VIRUS =
  'mail SES flagged as carrying a virus (`"virus": "fail"`) offers no download unless the operator allows it (the stack\'s `receivedVirusDownloads`)';

export const RECEIVING_DOCS: DocsOf<typeof RECEIVING_ROUTES> = {
  'list-received-emails': {
    ok: 'A page of received emails, newest first.',
    example: page([listed]),
    description:
      "Mail received at the domains with receiving enabled, newest first, in cursor pages: `limit` (1 to 100, default 20), then `after` or `before` an id from a page. Without bodies, headers or raw message (the email itself has them). Beside Resend's fields: `received_for` (the envelope recipients), `authentication` (SES's SPF, DKIM and DMARC verdicts), `spam` and `virus` (SES's scans), `in_reply_to` and `references`.",
  },
  'get-received-email': {
    ok: 'The received email, with its bodies, headers and a download link of its raw message.',
    example: {
      object: 'email',
      ...listed,
      html: '<p>Please find it attached.</p><img src="data:image/png;base64,iVBORw0KGgo…">',
      text: 'Please find it attached.',
      headers: { 'content-type': 'multipart/mixed; boundary="b1"', 'x-mailer': 'Example Mail' },
      raw: { download_url: LINK, expires_at: T1 },
    },
    description: `\`html_format\`: \`data_uri\` (the default) shows inline images as \`data:\` URIs of the attachments their \`cid:\` references name (images only, while the bodies stay within 5 MB; beyond it a reference stays \`cid:\`); \`cid\` keeps the message's \`cid:\` references. \`raw.download_url\` downloads the message as received (\`.eml\`), valid for an hour (\`expires_at\`). \`raw\` is null, and no image is inlined, for ${VIRUS}. Bodies over 5 MB are left out (\`html\` and \`text\` null, \`bodies_too_large: true\`): the raw message has them. \`truncated: true\` where the email's fields were cut to their limits (its headers and raw message have them whole). Ids are UUIDs: anything else is a 404.`,
  },
  'list-received-attachments': {
    ok: "The received email's attachments, in the message's order, each with a download link.",
    example: page([
      { object: 'attachment', ...image, download_url: LINK, expires_at: T1 },
      { object: 'attachment', ...file, download_url: LINK, expires_at: T1 },
    ]),
    description: `All of them when \`limit\` is absent (as Resend), or a page of \`limit\` (1 to 100) after or before one of them. Each link downloads the file (\`Content-Disposition: attachment\`) and works until \`expires_at\`, an hour. For ${VIRUS}: the attachments are listed without \`download_url\` and \`expires_at\`.`,
  },
  'get-received-attachment': {
    ok: 'The attachment, with a download link.',
    example: { object: 'attachment', ...file, download_url: LINK, expires_at: T1 },
    description: `Without \`download_url\` and \`expires_at\` for ${VIRUS}.`,
  },
};
