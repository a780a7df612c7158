/** Start-up configuration is invalid; the message lists every problem, one `VARIABLE: problem` a line. */
export class ConfigError extends Error {
  readonly issues: readonly string[];

  constructor(issues: readonly string[]) {
    super(issues.join('\n'));
    this.name = 'ConfigError';
    this.issues = Object.freeze([...issues]);
  }
}
