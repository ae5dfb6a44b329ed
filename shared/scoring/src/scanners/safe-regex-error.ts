/** A pattern we refuse to run; the message tells the policy author why. */
export class SafeRegexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SafeRegexError';
  }
}
