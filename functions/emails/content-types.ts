import { Mime } from 'mime/lite';
import standardTypes from 'mime/types/standard.js';

/**
 * The content type a filename implies, for an attachment given without one. Its own module,
 * loaded on first use (emails/attachments.ts `withContentTypes`): the MIME table is 12 KB that only
 * an email with such an attachment needs.
 */

// mime's standard types, and the office formats invoices and reports travel in (its full table of
// vendor types would add 31 KB to the function for types mail rarely carries).
const mime = new Mime(standardTypes);
mime.define(
  {
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document': ['docx'],
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': ['xlsx'],
    'application/vnd.openxmlformats-officedocument.presentationml.presentation': ['pptx'],
    'application/vnd.ms-excel': ['xls'],
    'application/vnd.ms-powerpoint': ['ppt'],
    'application/vnd.oasis.opendocument.text': ['odt'],
    'application/vnd.oasis.opendocument.spreadsheet': ['ods'],
    'application/vnd.oasis.opendocument.presentation': ['odp'],
    'application/vnd.apple.pkpass': ['pkpass'],
  },
  true,
);

/** The content type a filename's extension implies; `application/octet-stream` when none does. */
export const contentTypeOf = (filename: string): string =>
  mime.getType(filename) ?? 'application/octet-stream';
