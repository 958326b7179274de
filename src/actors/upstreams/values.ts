/** The enumerated values of the upstream domain (decisions.md): the lists live with the route schemas (handles.ts). */
export { adminStatuses, bindingStatuses, groupTypes, headersProfiles, namespaceStatuses, upstreamStatuses } from './handles.js';
/** The cloud-platform kind: cloud_location defaults to `global`. */
export const cloudPlatformType = 'vertex';
