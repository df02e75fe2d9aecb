/**
 * The one error shape every endpoint answers with:
 * `{"statusCode": 400, "name": "validation_error", "message": "…", "errors": [{field, message}]}`.
 * Names follow Resend's so existing clients recognise them; status codes follow our spec.
 */
export type ErrorName =
  | 'validation_error'
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'restricted_api_key'
  | 'invalid_access'
  | 'invalid_idempotency_key'
  | 'invalid_idempotent_request'
  | 'concurrent_idempotent_requests'
  | 'not_found'
  | 'method_not_allowed'
  | 'already_exists'
  | 'payload_too_large'
  | 'request_header_fields_too_large'
  | 'request_timeout'
  | 'rate_limit_exceeded'
  | 'service_unavailable'
  | 'internal_server_error';

export interface FieldError {
  /** Dotted path of the offending field, e.g. `to.3` or `subject`. */
  readonly field: string;
  readonly message: string;
}

export interface ErrorBody {
  statusCode: number;
  name: ErrorName;
  message: string;
  errors?: FieldError[];
}

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly errorName: ErrorName,
    message: string,
    readonly fieldErrors?: readonly FieldError[],
    /** Response headers that belong to this error (e.g. `Allow` on a 405). */
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { statusCode: this.statusCode, name: this.errorName, message: this.message };
    if (this.fieldErrors?.length) body.errors = [...this.fieldErrors];
    return body;
  }
}

export const validationError = (message: string, fieldErrors?: readonly FieldError[]) =>
  new ApiError(400, 'validation_error', message, fieldErrors);

/** A schema's issues as named fields (`to.1`, `3.tags.0.name`), each unknown key its own entry. */
export function fieldErrorsOf(
  issues: readonly {
    code: string;
    path: readonly PropertyKey[];
    message: string;
    keys?: readonly string[];
  }[],
  prefix: readonly PropertyKey[] = [],
): FieldError[] {
  const fields: FieldError[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path].map(String);
    if (issue.code === 'unrecognized_keys' && issue.keys)
      for (const key of issue.keys)
        fields.push({ field: [...path, key].join('.'), message: 'unknown field' });
    else fields.push({ field: path.join('.') || '(body)', message: issue.message });
  }
  return fields;
}

/** One message for a list of field errors. */
export const describeFields = (fields: readonly FieldError[]) =>
  fields.map((f) => (f.field === '(body)' ? f.message : `${f.field}: ${f.message}`)).join('; ');

export const notFound = (message: string) => new ApiError(404, 'not_found', message);

export const conflict = (message: string) => new ApiError(409, 'already_exists', message);

export const internalError = () =>
  new ApiError(500, 'internal_server_error', 'An unexpected error occurred. Please try again later.');
