/**
 * The part of `negotiator` 1.x the gateway uses. `@types/negotiator` describes 0.6, whose `encodings` has no
 * `preferred` order for encodings the client rates the same.
 */
declare module 'negotiator' {
  /** Reads a request's `Accept-*` headers. */
  class Negotiator {
    constructor(request: { headers: Record<string, string | string[] | undefined> });
    /**
     * The encodings of `available` the client accepts (q > 0), best first; among equal q-values those
     * earlier in `options.preferred` first. Without an `Accept-Encoding` header only `identity` is accepted.
     */
    encodings(available?: readonly string[], options?: { preferred?: readonly string[] }): string[];
  }
  export default Negotiator;
}
