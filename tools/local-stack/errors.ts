/** A problem with the local stack that the user fixes; its message is one sentence naming the fix. */
export class StackError extends Error {
  override name = 'StackError';
}
