/** The enumerated values of the upstream domain (decisions.md), shared by routes and rules. */
export const groupTypes = ['openai', 'anthropic', 'gemini', 'openai_compatible', 'vertex', 'anthropic_oauth', 'gemini_oauth', 'openai_oauth'] as const;
/** The cloud-platform kind: cloud_location defaults to `global`. */
export const cloudPlatformType = 'vertex';
export const headersProfiles = ['default', 'official_client', 'minimal'] as const;
/** Statuses an admin may set; `auto_disabled` is the system's. */
export const adminStatuses = ['active', 'manual_disabled'] as const;
export const upstreamStatuses = ['active', 'auto_disabled', 'manual_disabled'] as const;
export const bindingStatuses = ['active', 'disabled'] as const;
export const namespaceStatuses = ['active', 'suspended'] as const;
