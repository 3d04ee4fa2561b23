// The public API of @pkg/admin: re-exports only.
export { mountAdmin } from './mount';
export type { AdminHandle } from './mount';
export { ADMIN_DEFAULTS } from './options';
export type { AdminAuthorize, AdminOptions, AdminTraceOptions } from './options';
export type { AuditEntry } from './audit';
export type { TraceEntry, TraceSnapshot } from './trace';
export { adminErrorCodes } from './errors';
export type { AdminError, AdminErrorCode, AdminErrorInfo } from './errors';
