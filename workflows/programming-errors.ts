// Shared by every workflow's activity retry policies; no imports, so workflow code may use it.

/**
 * Error names that mean a bug in our code or a handler (`undefined is not a function`, a name
 * that does not exist, code that does not parse), never a passing condition. An activity failing
 * with one fails its workflow at once, visibly in the UI, instead of being retried forever with
 * the same result. Temporal matches a thrown error's `name` against these.
 */
export const PROGRAMMING_ERRORS = ['TypeError', 'ReferenceError', 'SyntaxError'] as const;
