/**
 * A problem with an input document (unreadable, not OpenAPI 3.x, a `$ref` that does not
 * resolve or points at a URL). The command line prints the message on one line and exits 2.
 */
export class DocumentError extends Error {}
