/**
 * Error codes of @pkg/admin. Options errors are thrown by `mountAdmin`; the others are the
 * `code` of the JSON error bodies its endpoints answer with.
 */
export interface AdminErrorInfo {
  /** A short generic description of the problem, for docs. */
  readonly message: string;
  /** The HTTP status that goes with the problem, when it has one. */
  readonly status?: number;
}

export const adminErrorCodes = {
  PKG_ERR_ADMIN_INVALID_OPTION: {
    message: 'An option of mountAdmin is unknown or has the wrong type or range.',
  },
  PKG_ERR_ADMIN_FORBIDDEN: {
    message:
      'A request for the admin page came from an address outside `allow` without the bearer `token`, or the `authorize` hook refused it.',
    status: 403,
  },
  PKG_ERR_ADMIN_BAD_QUERY: {
    message:
      'A query parameter or body field of an admin endpoint is missing, repeated or out of range.',
    status: 400,
  },
  PKG_ERR_ADMIN_ACTION_DISABLED: {
    message: 'A disconnect or revoke action was asked for, but `actions` does not enable it.',
    status: 403,
  },
  PKG_ERR_ADMIN_CROSS_SITE: {
    message:
      "An admin action came from another site (its Origin is not the page's) or without a JSON body.",
    status: 403,
  },
  PKG_ERR_ADMIN_UNAVAILABLE: {
    message: 'The other instances could not be asked (the cluster adapter is not connected).',
    status: 503,
  },
  PKG_ERR_ADMIN_NOT_FOUND: {
    message: 'No instance has a connection with that id.',
    status: 404,
  },
  PKG_ERR_ADMIN_PAGE_MISSING: {
    message:
      "The admin page's files (the package's page/ folder) are not beside its code, as in a server bundled into one file; the JSON views still answer.",
    status: 500,
  },
  PKG_ERR_ADMIN_TOO_MANY_TRACES: {
    message: 'As many connections as `trace.maxTraced` are traced already on that instance.',
    status: 429,
  },
} as const satisfies Record<string, AdminErrorInfo>;

export type AdminErrorCode = keyof typeof adminErrorCodes;

/** An error with a machine-readable `code` from {@link adminErrorCodes}. */
export type AdminError<E extends Error = Error> = E & { readonly code: AdminErrorCode };

type ErrorCtor = new (message: string) => Error;

/** Builds an error of the given class whose `code` is one of {@link adminErrorCodes}. */
export function createAdminError<C extends ErrorCtor>(
  Ctor: C,
  code: AdminErrorCode,
  message: string,
): AdminError<InstanceType<C>> {
  const err = new Ctor(message) as InstanceType<C> & { code: AdminErrorCode };
  Object.defineProperty(err, 'code', { value: code, enumerable: true });
  return err;
}

/** A failure an endpoint answers with its status and code. */
export class AdminRequestError extends Error {
  readonly code: AdminErrorCode;
  readonly status: number;

  constructor(code: AdminErrorCode, message: string) {
    super(message);
    this.name = 'AdminRequestError';
    this.code = code;
    this.status = (adminErrorCodes[code] as AdminErrorInfo).status ?? 400;
  }
}
