/**
 * What the shared document's server side and its pages agree on. Plain values, no imports:
 * the page's bundle (`browser/doc-sync.ts`) and `DocController` both read them.
 */

/** The namespace of the documents' rooms: one room per document, named as the document. */
export const DOC_NAMESPACE = '/docs';

/**
 * How many of a document's last updates its room keeps (and a page entering it reads). It is
 * also what one `$history` answer may hold (the server's `history_max_replay`, 300).
 */
export const DOC_HISTORY_SIZE = 300;

/**
 * A page sends its whole document (`doc.state`) instead of an update once this many updates
 * have gone by since the last whole document, so that the room's last DOC_HISTORY_SIZE
 * updates always hold the whole document.
 */
export const STATE_EVERY = 100;

/** Largest update (or whole document) a page may send, in bytes. */
export const MAX_DOC_UPDATE_BYTES = 128 * 1024;

/** Longest text of a document, in characters (the page's textarea stops there). */
export const MAX_DOC_LENGTH = 20_000;
