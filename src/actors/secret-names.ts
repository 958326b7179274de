/**
 * Which values are secrets, decided by their names: one rule for the API's
 * answers (masked to their last four characters) and the audit trail (masked
 * whole), so that nothing is hidden in one place and shown in the other.
 */

/** Fields of stored documents that hold a secret. */
const secretField = /^(master_key|key_secret|api_key|access_token|refresh_token|secret|password)$/i;

/** Header names that carry a credential: X-Api-Key, Authorization, Cookie, X-Auth-Token, ... */
const credentialHeader = /key|token|secret|auth|passw|cookie|credential|signature/i;

export const isSecretField = (name: string): boolean => secretField.test(name);

export const isCredentialHeader = (name: string): boolean => credentialHeader.test(name);

/** Fields whose value is a map of header names to values, masked entry by entry. */
export const isHeaderMap = (name: string): boolean => name === 'static_headers';

/** The header map with every credential's value replaced by `maskValue(value)`. */
export function maskHeaderValues(headers: Record<string, string>, maskValue: (value: string) => string): Record<string, string> {
  let out: Record<string, string> | undefined;
  for (const name in headers) {
    if (!isCredentialHeader(name) || headers[name] === '') continue;
    out ??= { ...headers };
    out[name] = maskValue(headers[name]!);
  }
  return out ?? headers;
}
