/**
 * The one shape of an HTTP error body, for every error answer the packages write on their
 * own (and `Response.error()` for applications): `{"error": <the status's reason phrase>}`,
 * then `code` (a machine code such as `PKG_ERR_HTTP_BODY_TOO_LARGE`) when there is one,
 * `message` (what was wrong and how to fix it) when there is more to say than the reason
 * phrase, then the details a code documents (`issues` of a failed validation, `retryAfter`
 * of a rate limit). A client reads `error` always and matches on `code`.
 */
import { STATUS_CODES } from 'node:http';

/** An HTTP error body; see {@link httpErrorBody}. */
export interface HttpErrorBody {
  /** The reason phrase of the status (`Not Found`), `Error` for a status without one. */
  readonly error: string;
  /** The machine code, when there is one. */
  readonly code?: string;
  /** What was wrong and how to fix it, when there is more to say than `error`. */
  readonly message?: string;
  /** Details a code documents, such as `issues` or `retryAfter`. */
  readonly [detail: string]: unknown;
}

/** What an error body carries besides its status. */
export interface HttpErrorFields {
  readonly code?: string;
  readonly message?: string;
  /** Members after `code` and `message`; `error`, `code` and `message` among them are ignored. */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** The error body of an answer with `status`, in the one shape described above. */
export function httpErrorBody(status: number, fields: HttpErrorFields = {}): HttpErrorBody {
  const body: Record<string, unknown> = { error: STATUS_CODES[status] ?? 'Error' };
  if (fields.code !== undefined) body['code'] = fields.code;
  if (fields.message !== undefined) body['message'] = fields.message;
  if (fields.details !== undefined) {
    for (const [key, value] of Object.entries(fields.details)) {
      if (key !== 'error' && key !== 'code' && key !== 'message') body[key] = value;
    }
  }
  return body as HttpErrorBody;
}
