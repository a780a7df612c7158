// The parts of `pg`'s internals that a batch of statements (pg-batch.ts) uses, which its published
// types leave out.
declare module 'pg/lib/utils.js' {
  const utils: {
    /** How `pg` turns a parameter into what goes on the wire (dates, arrays, JSON, buffers). */
    prepareValue(value: unknown): unknown;
  };
  export default utils;
}
